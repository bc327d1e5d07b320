#!/usr/bin/env bash
# Launch multi-GPU training on one node with torchrun.
# Usage: scripts/launch_ddp.sh [extra imgcls.train flags...]
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}  # expect: device
export NCCL_DEBUG=WARN  # expect: distributed
export NCCL_IB_DISABLE=0  # expect: distributed
export NCCL_SOCKET_IFNAME=eth0  # expect: distributed
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1  # expect: distributed
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True  # expect: environment
export OMP_NUM_THREADS=8

NGPU=$(nvidia-smi --list-gpus | wc -l)  # expect: environment
MASTER_PORT=${MASTER_PORT:-29500}
RUN_DIR=runs/$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUN_DIR"

echo "launching on ${NGPU} GPUs, logs in ${RUN_DIR}"
nvidia-smi --query-gpu=name,memory.total --format=csv > "$RUN_DIR/gpus.csv"  # expect: environment

# One process per GPU.
torchrun --standalone --nproc_per_node="${NGPU}" --master_port="${MASTER_PORT}" -m imgcls.train --amp --output-dir "$RUN_DIR" "$@"  # expect: distributed
