"""Fixtures of the GPU lab tests: every test runs on the CPU, and on CUDA too where a
GPU is present (the device list is built here, so no test is ever skipped)."""

import pytest
from gpu_plans import DEVICES

from flatkv.gpu import bench
from flatkv.gpu_settings import POOL_LAYOUTS


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(params=POOL_LAYOUTS)
def layout(request):
    """Each pool layout: slot-major (one tensor per slot) and page-major (one buffer)."""
    return request.param


@pytest.fixture(autouse=True)
def small_cache_flush(monkeypatch):
    """Benchmarks in tests flush 1 MiB, not the last-level cache: tests check results, not speed."""
    monkeypatch.setattr(bench, "_cache_flush_bytes", lambda device: 1 << 20)
