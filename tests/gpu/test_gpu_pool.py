"""Allocation of a plan: sizes equal the plan, caps, typed views at offsets, out of memory."""

import gc
import io
import weakref

import pytest
import torch
from gpu_plans import small_plan

from flatkv.gpu import kernels
from flatkv.gpu import pool as pool_mod
from flatkv.gpu.pool import PoolAllocationError, allocate_pool, fill_random, slot_layout
from flatkv.plan import LayerBinding, TensorPlan, plan_component_tensors


def test_allocation_equals_plan(device, layout):
    plan = small_plan()
    with allocate_pool(plan, device, layout=layout) as pool:
        assert [tuple(t.shape) for t in pool.tensors] == [(637, 864), (637, 352), (637, 352)]
        assert all(t.dtype == torch.uint8 and t.device.type == device for t in pool.tensors)
        r = pool.report
        assert (r.planned_blocks, r.allocated_blocks, r.cap_reason) == (637, 637, "plan")
        assert r.page_bytes == 1568
        assert r.planned_bytes == r.allocated_bytes == 637 * 1568 == 998_816
        assert [t.allocated_bytes for t in r.tensors] == [550_368, 224_224, 224_224]
        assert not r.capped and r.layout == pool.layout == layout
        # the movers' parts: the slot tensors, or one buffer of whole pages
        parts = [tuple(t.shape) for t in pool.page_parts]
        assert parts == ([(637, 864), (637, 352), (637, 352)] if layout == "slot-major"
                         else [(637, 1568)])
    assert pool.released and pool.tensors == () and pool.page_parts == ()


def test_max_blocks_caps_and_reports_planned_vs_allocated(device):
    with allocate_pool(small_plan(), device, max_blocks=50) as pool:
        r = pool.report
        assert (r.planned_blocks, r.allocated_blocks, r.cap_reason, r.capped) == (
            637, 50, "max_blocks", True)
        assert (r.planned_bytes, r.allocated_bytes) == (998_816, 50 * 1568)
        assert [t.planned_bytes for t in r.tensors] == [550_368, 224_224, 224_224]
        assert [t.allocated_bytes for t in r.tensors] == [43_200, 17_600, 17_600]


def test_default_cap_is_a_share_of_free_memory(monkeypatch):
    # 40% of 10,000 B is 4,000 B: two pages of 1,568 B.
    monkeypatch.setattr(pool_mod, "free_memory_bytes", lambda device: 10_000)
    with allocate_pool(small_plan(), "cpu") as pool:
        assert (pool.num_blocks, pool.report.cap_reason) == (2, "free memory")
    # 40% of 3,000 B holds no page.
    monkeypatch.setattr(pool_mod, "free_memory_bytes", lambda device: 3_000)
    with pytest.raises(PoolAllocationError, match="holds no block of 1568 bytes"):
        allocate_pool(small_plan(), "cpu")


def test_slot_offsets_accumulate_rows_in_binding_order():
    plan = small_plan()
    layouts = [slot_layout(t, 637) for t in plan.tensors]
    # Slot 0: conv at 0, ssm at 96, then the full-attention row starts at 96 + 256 = 352.
    assert layouts[0].offsets == (0, 96, 352)
    assert layouts[0].state_ranges == ((0, 352),)
    assert layouts[1].offsets == (0, 96) and layouts[1].row_bytes == 352


def test_typed_views_sit_at_their_offsets(device, layout):
    plan = small_plan()
    conv, ssm, kv = plan.tensors[0].bindings
    with allocate_pool(plan, device, max_blocks=10, layout=layout) as pool:
        slab = pool.tensors[0]
        slab.zero_()
        kv_view = pool.view(kv, torch.int32)
        assert tuple(kv_view.shape) == (10, 128)  # 512 B of KV as 4-byte elements
        kv_view[5] = torch.arange(1, 129, dtype=torch.int32, device=slab.device)
        expected = torch.arange(1, 129, dtype=torch.int32).view(torch.uint8)
        assert torch.equal(slab[5, 352:864].cpu(), expected)
        assert int(slab[5, :352].count_nonzero()) == 0 and int(slab[4].count_nonzero()) == 0
        ssm_view = pool.view(ssm, torch.float32)
        assert tuple(ssm_view.shape) == (10, 64)
        ssm_view[2, 0] = 1.0  # float32 1.0 is bytes 00 00 80 3f, at byte 96 of row 2
        assert slab[2, 96:100].tolist() == [0, 0, 128, 63]
        assert tuple(pool.view(conv).shape) == (10, 96)
        assert len(pool.views(torch.int16)) == 7  # 3 + 2 + 2 bindings


def test_typed_view_refuses_misaligned_dtype():
    # conv 6 B then ssm 10 B: ssm starts at byte 6, not a whole number of int32.
    plan = small_plan(conv=6, ssm=10)
    with allocate_pool(plan, "cpu", max_blocks=4) as pool:
        ssm = plan.tensors[1].bindings[1]
        with pytest.raises(ValueError, match=r"sits at byte 6 of a 16-byte row \(slot-major "
                           r"pool\) with 10 bytes: not a whole number of torch.int32"):
            pool.view(ssm, torch.int32)
        assert tuple(pool.view(ssm, torch.int16).shape) == (4, 5)
    # Page-major: state 6 + 10 = 16 B (ceil(16 / 64) = 1 slot, P stays 4), so slot 0 is
    # 16 + 4 x 64 = 272 B and slots 1, 2 are 16 B: a 304-byte page row. Slot 1 starts at byte
    # 272, its ssm at 278: still no whole int32, and the check counts from the page row.
    with allocate_pool(plan, "cpu", max_blocks=4, layout="page-major") as pool:
        with pytest.raises(ValueError, match=r"sits at byte 278 of a 304-byte row \(page-major "
                           r"pool\)"):
            pool.view(plan.tensors[1].bindings[1], torch.int32)
        assert tuple(pool.view(plan.tensors[1].bindings[1], torch.int16).shape) == (4, 5)


def test_per_component_plan_allocates_each_component():
    # One tensor per component: 3 x (96 + 256) state rows + one KV row of 64 x 4 = 256 B.
    from gpu_plans import small_components

    plan = plan_component_tensors(small_components(), block_size=4, budget_bytes=100_000)
    with allocate_pool(plan, "cpu") as pool:
        assert pool.page_bytes == 3 * (96 + 256) + 256 == 1312
        assert pool.num_blocks == 100_000 // 1312 == 76
        assert pool.state_bytes_per_page == 3 * 352


def test_inconsistent_plan_is_refused():
    bad = TensorPlan("t", 2 * 20, (LayerBinding(0, "g", 0, "a", 8, 0),
                                   LayerBinding(0, "g", 0, "b", 12, 4)))
    with pytest.raises(ValueError, match="row_offset=4, but its row packs it at 8"):
        slot_layout(bad, 2)
    wrong_size = TensorPlan("t", 41, (LayerBinding(0, "g", 0, "a", 20, 0),))
    with pytest.raises(ValueError, match="plans 41 bytes but 2 blocks of its 20-byte row"):
        slot_layout(wrong_size, 2)


def test_out_of_memory_frees_what_was_allocated():
    allocated = []

    def failing_allocator(shape, device):
        if allocated:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 1.00 GiB")
        t = torch.empty(shape, dtype=torch.uint8, device=device)
        allocated.append(weakref.ref(t))
        return t

    with pytest.raises(PoolAllocationError) as info:
        allocate_pool(small_plan(), "cpu", max_blocks=10, allocator=failing_allocator)
    message = str(info.value)
    assert "flat_slab_1" in message and "everything allocated was freed" in message
    assert "\n" not in message
    gc.collect()
    assert allocated[0]() is None  # slot 0's tensor is gone


def test_out_of_memory_in_page_major_names_the_buffer():
    def failing_allocator(shape, device):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 1.00 GiB")

    with pytest.raises(PoolAllocationError, match=r"allocating the page-major buffer \(15680 "
                       r"bytes, 10 blocks of 1568 bytes over 3 slots\)"):
        allocate_pool(small_plan(), "cpu", max_blocks=10, allocator=failing_allocator,
                      layout="page-major")


def test_per_component_plan_allocates_page_major_too():
    # One page-id space: each component's row sits in every page row, 1,312 B per page.
    from gpu_plans import small_components

    plan = plan_component_tensors(small_components(), block_size=4, budget_bytes=100_000)
    with allocate_pool(plan, "cpu", layout="page-major") as pool:
        (buffer,) = pool.page_parts
        assert tuple(buffer.shape) == (76, 1312)
        assert [t.shape[1] for t in pool.tensors] == [96, 256] * 3 + [256]



def test_odd_rows_page_major_move_and_view_exactly(device):
    # kv 1, conv 3, ssm 2 B per component, block 4: seven component tensors of 3, 2, 3, 2, 3,
    # 2 and 4 B, so a 19-byte page row whose slots start at bytes 0, 3, 5, 8, 10, 13 and 15.
    from gpu_plans import small_components

    from flatkv.gpu import triton_kernels

    plan = plan_component_tensors(small_components(kv=1, conv=3, ssm=2), block_size=4,
                                  budget_bytes=10_000)
    with allocate_pool(plan, device, max_blocks=40, layout="page-major") as pool:
        (buffer,) = pool.page_parts
        assert (pool.page_bytes, tuple(buffer.shape)) == (19, (40, 19))
        assert [t.data_ptr() - buffer.data_ptr() for t in pool.tensors] == [
            0, 3, 5, 8, 10, 13, 15]
        # slot-major would give ssm 0 its own 2-byte rows; here it starts at odd byte 3
        with pytest.raises(ValueError, match="sits at byte 3 of a 19-byte row"):
            pool.view(plan.tensors[1].bindings[0], torch.int16)
        fill_random(pool.page_parts, seed=6)
        original = buffer.clone()
        ids = [31, 2, 17, 0, 39]
        for gather, scatter in ((kernels.gather, kernels.scatter),
                                (triton_kernels.gather, triton_kernels.scatter)):
            staging = kernels.new_staging(pool, len(ids))
            gather(pool, ids, staging)
            assert torch.equal(staging.view(5, 19).cpu(), original[ids].cpu())  # page by page
            buffer[ids] = 0
            scatter(pool, ids, staging)
            assert torch.equal(buffer, original)
        assert kernels.copy_state_rows(pool, [4, 5], [6, 7]) == 2 * 3 * (3 + 2)
        assert torch.equal(buffer[6:8, :15], original[4:6, :15])  # the state rows moved
        assert torch.equal(buffer[6:8, 15:], original[6:8, 15:])  # the KV rows stayed


def test_a_pool_past_free_memory_is_refused_before_allocating(monkeypatch):
    # Host memory is overcommitted: an allocation past it does not fail, the process is killed
    # when the pages are touched. 2**40 blocks of 1,568 B (about 1.7 PB) never get that far.
    plan = small_plan(budget=1568 << 41)
    with pytest.raises(PoolAllocationError, match=rf"^{1 << 40} blocks of 1568 "
                       rf"bytes need {(1 << 40) * 1568} bytes but cpu has \d+ bytes free"):
        allocate_pool(plan, "cpu", max_blocks=1 << 40)
    # an explicit cap is checked against free memory too: 10 x 1,568 B > 10,000 B
    monkeypatch.setattr(pool_mod, "free_memory_bytes", lambda device: 10_000)
    with pytest.raises(PoolAllocationError, match="cpu has 10000 bytes free: give max blocks of "
                       "at most 6$"):
        allocate_pool(small_plan(), "cpu", max_blocks=10)
    with allocate_pool(small_plan(), "cpu", max_blocks=6) as pool:
        assert pool.num_blocks == 6


def test_bad_inputs_name_the_field():
    with pytest.raises(ValueError, match="max_blocks 0 must be positive: give 1 or more"):
        allocate_pool(small_plan(), "cpu", max_blocks=0)
    with pytest.raises(ValueError, match="device must be 'cpu', 'cuda' or 'cuda:N'"):
        allocate_pool(small_plan(), "tpu")
    with pytest.raises(ValueError, match="plan must be a FlatMemoryPlan"):
        allocate_pool("plan", "cpu")
    with pytest.raises(ValueError, match="layout='row-major' is not a pool layout: choose one "
                       "of slot-major, page-major"):
        allocate_pool(small_plan(), "cpu", layout="row-major")
    with allocate_pool(small_plan(), "cpu", max_blocks=2) as pool:
        pass
    with pytest.raises(ValueError, match="released"):
        pool.view(small_plan().tensors[0].bindings[0])


def test_fill_random_is_not_zero_and_seeded():
    a = torch.empty(64, 40, dtype=torch.uint8)
    b = torch.empty(64, 40, dtype=torch.uint8)
    fill_random([a], seed=3)
    fill_random([b], seed=3)
    assert torch.equal(a, b)
    assert int(a.count_nonzero()) > a.numel() // 2
    assert int((a[:, 7::8] >= 128).sum()) > 0  # the top byte of each int64 word has a high bit


def vm_flags(address):
    """The VmFlags of the mapping that holds ``address``, from /proc/self/smaps.

    proc(5): a mapping header is ``start-end perms ...``; ``hg`` in VmFlags means the range was
    advised with MADV_HUGEPAGE.
    """
    inside = False
    with open("/proc/self/smaps", encoding="ascii", errors="replace") as smaps:
        for line in smaps:
            head = line.split(maxsplit=1)[0]
            if "-" in head and not head.endswith(":"):
                low, high = (int(x, 16) for x in head.split("-"))
                inside = low <= address < high
            elif inside and line.startswith("VmFlags:"):
                return line.split()[1:]
    raise AssertionError(f"no mapping holds address {address:#x}")


def test_cpu_pool_and_staging_are_advised_onto_huge_pages():
    # small_plan(budget=10**8): 10**8 // 1568 = 63,775 blocks; capped at 8,000, slot 0 holds
    # 8,000 x 864 = 6,912,000 B (6.6 MiB), so its aligned interior holds at least two 2 MiB pages.
    huge = pool_mod.HUGE_PAGE_BYTES
    assert huge == 2 * 1024 * 1024
    with allocate_pool(small_plan(budget=10**8), "cpu", max_blocks=8000) as pool:
        slot0 = pool.tensors[0]
        assert slot0.numel() == 6_912_000
        first_huge = -(-slot0.data_ptr() // huge) * huge
        assert "hg" in vm_flags(first_huge)
        staging = kernels.new_staging(pool, 4000)  # 4,000 x 1,568 = 6,272,000 B
        assert "hg" in vm_flags(-(-staging.data_ptr() // huge) * huge)
    # Under two huge pages there may be no whole aligned one inside: left alone.
    assert pool_mod.advise_huge_pages(torch.empty(huge, dtype=torch.uint8)) is False


def test_huge_page_advice_keeps_the_contents():
    t = pool_mod.empty_bytes(3 * pool_mod.HUGE_PAGE_BYTES, torch.device("cpu"))
    t.copy_(torch.arange(t.numel()) % 251)
    assert pool_mod.advise_huge_pages(t) is True  # advising written memory changes nothing
    assert torch.equal(t, torch.arange(t.numel()) % 251)


def test_free_host_memory_respects_a_memory_cgroup(tmp_path):
    # cgroup v2: 8 GiB allowed, 3 GiB used -> 5 GiB of room
    (tmp_path / "memory.max").write_text(f"{8 << 30}\n")
    (tmp_path / "memory.current").write_text(f"{3 << 30}\n")
    assert pool_mod.cgroup_room_bytes(tmp_path) == 5 << 30
    (tmp_path / "memory.max").write_text("max\n")  # no limit
    assert pool_mod.cgroup_room_bytes(tmp_path) is None
    # cgroup v1, under memory/: its "no limit" is a number near 2**63
    v1 = tmp_path / "v1"
    (v1 / "memory").mkdir(parents=True)
    (v1 / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (v1 / "memory" / "memory.usage_in_bytes").write_text("1000\n")
    assert pool_mod.cgroup_room_bytes(v1) is None
    (v1 / "memory" / "memory.limit_in_bytes").write_text("5000\n")
    assert pool_mod.cgroup_room_bytes(v1) == 4000
    assert pool_mod.cgroup_room_bytes(tmp_path / "none") is None  # no cgroup files at all


def test_free_host_memory_is_the_smaller_of_meminfo_and_the_cgroup(monkeypatch):
    # a stand-in /proc/meminfo: MemAvailable is in kB (1,024 B), 3,000,000 kB = 3,072,000,000 B
    meminfo = "MemTotal:       16000000 kB\nMemFree:         1000000 kB\n" \
              "MemAvailable:    3000000 kB\nBuffers:          200000 kB\n"
    opened = []

    def fake_open(path, *args, **kwargs):
        opened.append(path)
        return io.StringIO(meminfo)

    monkeypatch.setattr(pool_mod, "open", fake_open, raising=False)
    cpu = torch.device("cpu")
    monkeypatch.setattr(pool_mod, "cgroup_room_bytes", lambda: 12_345)
    assert pool_mod.free_memory_bytes(cpu) == 12_345  # the cgroup's room is the smaller
    monkeypatch.setattr(pool_mod, "cgroup_room_bytes", lambda: 5 * 10**9)
    assert pool_mod.free_memory_bytes(cpu) == 3_000_000 * 1024 == 3_072_000_000
    monkeypatch.setattr(pool_mod, "cgroup_room_bytes", lambda: None)  # no limit
    assert pool_mod.free_memory_bytes(cpu) == 3_072_000_000
    assert opened == ["/proc/meminfo"] * 3
    # a kernel without MemAvailable: the free pages sysconf reports, 1,000 of 4,096 B
    meminfo = "MemTotal:       16000000 kB\nMemFree:         1000000 kB\n"
    pages = {"SC_AVPHYS_PAGES": 1000, "SC_PAGE_SIZE": 4096}
    monkeypatch.setattr(pool_mod.os, "sysconf", pages.__getitem__)
    assert pool_mod.free_memory_bytes(cpu) == 4_096_000


def test_free_cuda_memory_counts_blocks_torch_caches_without_a_tensor(monkeypatch):
    # No GPU is needed: the driver reports 10 GB free of 80; torch's allocator has reserved
    # 7 GB, 3 GB of it in tensors. The other 4 GB (say a failed run's buffers, freed once its
    # error was dropped) are torch's to hand out again: 14 GB free for the next pool.
    cuda = torch.device("cuda", 0)
    asked = []

    def per_device(value):
        def read(device=None):
            asked.append(device)
            return value
        return read

    monkeypatch.setattr(torch.cuda, "mem_get_info", per_device((10 * 10**9, 80 * 10**9)))
    monkeypatch.setattr(torch.cuda, "memory_reserved", per_device(7 * 10**9))
    monkeypatch.setattr(torch.cuda, "memory_allocated", per_device(3 * 10**9))
    assert pool_mod.free_memory_bytes(cuda) == 14 * 10**9
    assert asked == [cuda] * 3  # the benchmarked GPU's figures, not the current one's


def test_a_plan_whose_state_group_is_not_a_layer_label_is_refused(device):
    # a second constant group 'mamba1' beside linear_attention: the pool tells state rows by
    # the group's label, so its rows would be left out of a state-row copy (512 of 768 B
    # moved, without a word); the plan is refused before anything is allocated
    from flatkv.plan import ComponentSpec, plan_tensors

    components = [ComponentSpec("full_attention", 0, "kv", 64, 0),
                  ComponentSpec("linear_attention", 0, "ssm", 0, 512),
                  ComponentSpec("mamba1", 0, "ssm", 0, 256)]
    plan = plan_tensors(components, block_size=16, alignment=16, budget_bytes=1 << 20)
    with pytest.raises(ValueError) as raised:
        allocate_pool(plan, device)
    assert str(raised.value).startswith(
        "plan group 'mamba1' (tensor 'flat_slab_0') is not a layer label: the GPU lab's "
        "state-row copy knows a group's kind by its label; name groups by one of")
