#!/usr/bin/env bash
# Download and tokenize the pre-training corpus. Runs on any machine: no GPU (and no CUDA) needed.
set -euo pipefail

DATA_DIR=${1:-/data/lm}
mkdir -p "$DATA_DIR/raw"

if [ ! -f "$DATA_DIR/raw/.done" ]; then
  curl -fsSL "https://example.org/corpus/shards.txt" | while read -r url; do
    curl -fsSL "$url" | tar -xz -C "$DATA_DIR/raw"
  done
  touch "$DATA_DIR/raw/.done"
fi

python -m tools.preprocess --input "$DATA_DIR/raw" --output "$DATA_DIR/tokens.bin" --workers "$(nproc)"
du -h "$DATA_DIR/tokens.bin"
