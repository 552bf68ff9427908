"""The GPU lab: a plan made of real tensors, page movers over it, and a benchmark that times them.

This package is the only place in ``flatkv`` that imports torch. It runs on a CUDA GPU when there
is one, else on the CPU, so every part is testable on a CPU-only machine.

- ``pool``: allocate a FlatMemoryPlan (one uint8 tensor per TensorPlan, ``(num_blocks, row_bytes)``,
  so a page id indexes dim 0; or one page-major buffer of whole pages), capped to what fits, with
  typed views per binding.
- ``kernels``: torch reference page movers (gather, scatter, host mirror, state-row copy).
- ``triton_kernels``: a fused gather / scatter over all slots in one launch (imported on demand).
- ``bench``: the timing harness, frozen results, sweeps and the per-device lock.
"""

from flatkv.gpu.bench import (
    BenchResult,
    DeviceBusy,
    DeviceLock,
    Figure,
    available_devices,
    available_implementations,
    device_lock,
    run_benchmark,
    run_sweep,
)
from flatkv.gpu.kernels import (
    PageIds,
    copy_from_host,
    copy_state_rows,
    copy_to_host,
    gather,
    new_staging,
    page_ids,
    scatter,
)
from flatkv.gpu.pool import AllocationReport, FlatPool, PoolAllocationError, allocate_pool

__all__ = [
    "AllocationReport",
    "BenchResult",
    "DeviceBusy",
    "DeviceLock",
    "Figure",
    "FlatPool",
    "PageIds",
    "PoolAllocationError",
    "allocate_pool",
    "available_devices",
    "available_implementations",
    "copy_from_host",
    "copy_state_rows",
    "copy_to_host",
    "device_lock",
    "gather",
    "new_staging",
    "page_ids",
    "run_benchmark",
    "run_sweep",
    "scatter",
]
