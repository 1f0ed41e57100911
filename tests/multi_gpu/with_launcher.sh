#!/usr/bin/env bash
# Runs a multi-GPU example the way a cluster starts ranks: one process per
# GPU of this host, started by an existing launcher instead of the example's
# own.
#
#   with_launcher.sh torchrun|mpirun|net -- COMMAND [ARGS...]
#
#   torchrun  torchrun --standalone --nproc-per-node <GPUs> (COMMAND a program
#             or a Python script; torchrun sets RANK, WORLD_SIZE, LOCAL_RANK,
#             MASTER_ADDR, MASTER_PORT)
#   mpirun    mpirun -np <GPUs> (Open MPI or MPICH, whichever is on PATH)
#   net       COMMAND as it is, with NCCL's peer-to-peer and shared-memory
#             transports off, so the ranks talk through its network
#             transport over loopback, as ranks on different hosts would
#
# Exits 77 with "SKIPPED: ..." where the launcher is not installed or there
# is no GPU, which run_example.sh reports as skipped.
set -uo pipefail
kind=$1
shift
[ "${1:-}" = "--" ] && shift
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
fi
# The devices this process may use: CUDA_VISIBLE_DEVICES narrows them.
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && [ "$gpus" -gt 0 ]; then
  visible=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
  [ "$visible" -lt "$gpus" ] && gpus=$visible
fi
if [ "$gpus" -eq 0 ]; then
  echo "with_launcher.sh: SKIPPED: no CUDA device"
  exit 77
fi
case "$1" in
  *.py) script=1 ;;
  *) script=0 ;;
esac

case "$kind" in
  torchrun)
    if ! python3 -c "import torch.distributed.run" >/dev/null 2>&1; then
      echo "with_launcher.sh: SKIPPED: torchrun (PyTorch) is not installed"
      exit 77
    fi
    extra=()
    [ $script -eq 0 ] && extra=(--no-python)
    echo "with_launcher.sh: torchrun --standalone --nproc-per-node $gpus ${extra[*]} $*"
    exec python3 -m torch.distributed.run --standalone --nproc-per-node "$gpus" "${extra[@]}" "$@"
    ;;
  mpirun)
    if ! command -v mpirun >/dev/null 2>&1; then
      echo "with_launcher.sh: SKIPPED: mpirun is not installed"
      exit 77
    fi
    run=("$@")
    [ $script -eq 1 ] && run=(python3 "$@")
    root=()
    [ "$(id -u)" -eq 0 ] && mpirun --version 2>&1 | grep -qi "open mpi" && root=(--allow-run-as-root --oversubscribe)
    pass=()
    for v in NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS CUABI_NCCL_PATH \
      PYTHONPATH CUABI_LIBRARY CUABI_CACHE_DIR CUABI_BACKEND; do
      [ -n "${!v:-}" ] && pass+=(-x "$v")
    done
    echo "with_launcher.sh: mpirun -np $gpus ${root[*]} ${run[*]}"
    exec mpirun -np "$gpus" "${root[@]}" "${pass[@]}" "${run[@]}" 2>&1
    ;;
  net)
    export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=lo
    export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
    run=("$@")
    [ $script -eq 1 ] && run=(python3 "$@")
    echo "with_launcher.sh: NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=lo ${run[*]}"
    log=$(mktemp)
    "${run[@]}" >"$log" 2>&1
    rc=$?
    grep -v "NCCL INFO" "$log"
    grep -m 3 "via NET/Socket" "$log"
    if [ $rc -eq 0 ] && ! grep -q "needs two devices" "$log" && ! grep -q "via NET/Socket" "$log"; then
      echo "with_launcher.sh: FAIL: NCCL did not report its socket transport (via NET/Socket)"
      rc=1
    fi
    rm -f "$log"
    exit $rc
    ;;
  *)
    echo "with_launcher.sh: unknown launcher $kind (torchrun, mpirun or net)" >&2
    exit 2
    ;;
esac
