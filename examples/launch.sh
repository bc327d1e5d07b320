#!/usr/bin/env bash
# Train on every GPU of this node.
set -euo pipefail
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
NGPU=$(nvidia-smi --list-gpus | wc -l)
torchrun --standalone --nproc_per_node="$NGPU" train.py --amp "$@"
