#!/usr/bin/env bash
# The multi-GPU figures, each side by side in one run (bench/README.md):
#   peer copies   every ordered device pair, 256 MiB, cuabi_buffer_copy_async
#                 against cuMemcpyPeerAsync on the same stream, rounds
#                 alternating (peer_copy.c)
#   all-reduce    bus bandwidth (nccl-tests' definition) from 1 MiB to 1 GiB:
#                 nccl_allreduce --sweep (NCCL on cuabi buffers and streams)
#                 against torch.distributed (allreduce_torch.py under
#                 torchrun), runs alternating, --repeats of each
#
#   bench/multi_gpu/run.sh [--out DIR] [--repeats K] [--mib M] [--build DIR]
#
# Writes peer.jsonl, allreduce-*.txt, results.json, results.md and chart.png
# into DIR (default bench/results/DATE-GPU-xN-multi). Needs a build of cuabi
# with the examples (--build, default build) and, for the torch figures,
# PyTorch; NCCL as nccl_allreduce finds it (CUABI_NCCL_PATH or pip's
# nvidia-nccl-cu13). NVLink multicast stays off everywhere.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo" || exit 2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
out="" repeats=3 mib=1024 build=build
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && [ "$gpus" -gt 0 ]; then  # narrowed to these
  visible=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
  [ "$visible" -lt "$gpus" ] && gpus=$visible
fi
if [ "$gpus" -lt 2 ]; then
  echo "bench/multi_gpu: needs two devices, found $gpus"
  exit 0
fi
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | tr ' ' '-')
[ -n "$out" ] || out="bench/results/$(date +%F)-$name-x$gpus-multi"
mkdir -p "$out"
lib=$(cd "$build" && pwd)
if [ -z "${CUABI_NCCL_PATH:-}" ]; then
  CUABI_NCCL_PATH=$(python3 -c 'import glob, os, nvidia.nccl as m; print(sorted(glob.glob(os.path.join(list(m.__path__)[0], "lib", "libnccl.so*")))[-1])' 2>/dev/null)
  export CUABI_NCCL_PATH
fi

cc -O2 -Wall -Wextra -o "$out/peer_copy" "$here/peer_copy.c" -I include -L "$lib" -lcuabi \
  -Wl,-rpath,"$lib" -ldl || exit 1
echo "== peer copies ($gpus GPUs)"
"$out/peer_copy" --mib 256 --rounds 30 >"$out/peer.jsonl" || { echo "peer_copy failed"; exit 1; }
rm -f "$out/peer_copy"

have_torch=0
python3 -c "import torch.distributed.run" 2>/dev/null && have_torch=1
for k in $(seq 1 "$repeats"); do
  echo "== all-reduce, run $k of $repeats: cuabi"
  "$lib/nccl_allreduce" --mib "$mib" --iters 20 --warmup 5 --sweep >"$out/allreduce-cuabi-$k.txt" 2>&1 ||
    { cat "$out/allreduce-cuabi-$k.txt"; exit 1; }
  if [ $have_torch -eq 1 ]; then
    echo "== all-reduce, run $k of $repeats: torch.distributed"
    python3 -m torch.distributed.run --standalone --nproc-per-node "$gpus" \
      "$here/allreduce_torch.py" --mib "$mib" >"$out/allreduce-torch-$k.txt" 2>&1 ||
      { cat "$out/allreduce-torch-$k.txt"; exit 1; }
  fi
done
nvidia-smi topo -m >"$out/topology.txt" 2>&1
python3 "$here/report.py" "$out" --gpus "$gpus" --name "$name"
