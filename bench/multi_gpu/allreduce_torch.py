"""The all-reduce sweep through torch.distributed (NCCL backend), for
bench/multi_gpu/run.sh: started by torchrun, one rank per GPU, it times
`iters` all-reduces (sum, float32, in place) after `warmup` at every power
of two from 1 MiB to --mib with CUDA events on the rank's current stream,
and rank 0 prints "sweep <bytes> <ms> <algbw GB/s> <busbw GB/s>" lines, the
same form as nccl_allreduce --sweep."""

from __future__ import annotations

import argparse
import os

os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, n = dist.get_rank(), dist.get_world_size()
    buf = torch.zeros((args.mib << 20) // 4, dtype=torch.float32, device="cuda")
    part = 1 << 20
    while part <= args.mib << 20:
        view = buf[: part // 4]
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for i in range(args.warmup + args.iters):
            if i == args.warmup:
                start.record()
            dist.all_reduce(view)
        stop.record()
        stop.synchronize()
        seconds = start.elapsed_time(stop) * 1e-3 / args.iters
        if rank == 0:
            algbw = part / seconds / 1e9
            print(f"sweep {part} {seconds * 1e3:.4f} {algbw:.2f} {algbw * 2 * (n - 1) / n:.2f}",
                  flush=True)
        part *= 2
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
