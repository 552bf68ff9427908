"""Page movers: gather / scatter round trips, untouched rows, host mirror, state-row copy, and the
fused Triton kernel against the torch reference (interpreted on the CPU, compiled on CUDA), in
both pool layouts (slot-major and page-major)."""

import pytest
import torch
from gpu_plans import small_plan

from flatkv.gpu import kernels, triton_kernels
from flatkv.gpu.pool import allocate_pool, fill_random
from flatkv.gpu_settings import PAGE_MAJOR, SLOT_MAJOR
from flatkv.plan import components_from_layers, plan_component_tensors, plan_tensors

IDS = [7, 3, 40, 11, 0, 49]


@pytest.fixture
def pool(device, layout):
    with allocate_pool(small_plan(), device, max_blocks=50, layout=layout) as p:
        fill_random(p.tensors, seed=11)
        yield p


def snapshot(pool):
    return [t.clone() for t in pool.tensors]


def expected_staging(pool, ids):
    """By hand, from the slot tensors. Slot-major pool: slot 0's rows of ids in order, then slot
    1's, then slot 2's. Page-major pool: page by page, each page's slot rows in slot order."""
    index = torch.tensor(ids)
    slots = [t.cpu() for t in pool.tensors]
    if pool.layout == SLOT_MAJOR:
        return torch.cat([t[index].reshape(-1) for t in slots])
    return torch.cat([t[i] for i in ids for t in slots])


def test_gather_lays_out_staging_as_the_pool_lays_out_pages(pool):
    staging = kernels.new_staging(pool, len(IDS))
    assert staging.numel() == 6 * 1568
    kernels.gather(pool, IDS, staging)
    assert torch.equal(staging.cpu(), expected_staging(pool, IDS))
    # Slot-major: slot 1 starts after slot 0's six 864-byte rows, so byte 5184 is page 7's
    # slot-1 row. Page-major: page 7 comes first and its slot-1 row follows its 864-byte slot 0.
    start = 5184 if pool.layout == SLOT_MAJOR else 864
    assert torch.equal(staging[start:start + 352].cpu(), pool.tensors[1][7].cpu())


def test_page_major_pool_is_one_buffer_of_whole_pages(device):
    with allocate_pool(small_plan(), device, max_blocks=50, layout=PAGE_MAJOR) as p:
        (buffer,) = p.page_parts
        assert tuple(buffer.shape) == (50, 1568) and buffer.is_contiguous()
        # slot s is columns [start, start + row) of every page row: a strided view, no copy
        assert [t.stride() for t in p.tensors] == [(1568, 1)] * 3
        assert [t.data_ptr() - buffer.data_ptr() for t in p.tensors] == [0, 864, 1216]
        p.tensors[2][9] = 7
        assert torch.equal(buffer[9, 1216:].cpu(), torch.full((352,), 7, dtype=torch.uint8))
        assert p.report.layout == PAGE_MAJOR and p.report.allocated_bytes == 50 * 1568


@pytest.mark.parametrize("mover", ["torch", "triton"])
def test_scatter_of_gather_restores_the_pool_exactly(pool, mover):
    gather, scatter = movers(mover)
    original = snapshot(pool)
    staging = kernels.new_staging(pool, len(IDS))
    gather(pool, kernels.page_ids(pool, IDS), staging)
    for t in pool.tensors:
        t[IDS] = torch.randint(1, 256, t[IDS].shape, dtype=torch.uint8, device=t.device)
    assert not torch.equal(pool.tensors[0][IDS], original[0][IDS])
    scatter(pool, kernels.page_ids(pool, IDS), staging)
    for now, before in zip(pool.tensors, original, strict=True):
        assert torch.equal(now, before)


@pytest.mark.parametrize("mover", ["torch", "triton"])
def test_scatter_writes_only_the_ids(pool, mover):
    _, scatter = movers(mover)
    original = snapshot(pool)
    staging = kernels.new_staging(pool, len(IDS))
    fill_random([staging], seed=5)
    scatter(pool, IDS, staging)
    assert torch.equal(expected_staging(pool, IDS), staging.cpu())
    others = [i for i in range(50) if i not in IDS]
    for now, before in zip(pool.tensors, original, strict=True):
        assert torch.equal(now[others], before[others])


@pytest.mark.parametrize("mover", ["torch", "triton"])
def test_round_trip_keeps_nan_bit_patterns(pool, mover):
    # The torch mover carries 16-byte rows as complex128: NaN payloads must survive untouched.
    gather, scatter = movers(mover)
    words = pool.tensors[0].view(torch.int64)
    words[:, 0] = 0x7FF0000000000001  # signalling NaN
    words[:, 1] = -0x0008000000000000 + 5  # negative quiet NaN with a payload (0xFFF8...05)
    original = snapshot(pool)
    staging = kernels.new_staging(pool, len(IDS))
    gather(pool, IDS, staging)
    for t in pool.tensors:
        t[IDS] = 0
    scatter(pool, IDS, staging)
    assert all(torch.equal(a, b) for a, b in zip(pool.tensors, original, strict=True))


def movers(name):
    if name == "torch":
        return kernels.gather, kernels.scatter
    return triton_kernels.gather, triton_kernels.scatter


@pytest.mark.parametrize(("chunk", "block"), [(32, 16), (48, 32)])
def test_triton_matches_torch_across_chunks_blocks_and_tails(device, layout, monkeypatch, chunk,
                                                             block):
    # conv 6 B + ssm 10 B = 16 B state rows; ceil(16 / 16) = 1 <= 4 keeps P = 4, so the KV row
    # is 16 * 4 = 64 B: rows of 16 + 64 = 80 (slot 0) and 16 B (slots 1, 2), so the fused
    # kernel works in 16-byte units here. Chunks of 32 B, blocks of 16 B: an 80-byte row spans 3
    # chunks (the last one partial), two whole blocks per full chunk. Chunks of 48 B, blocks of
    # 32 B: chunk 0 is one whole block and a masked 16-byte tail, chunk 1 one whole block.
    monkeypatch.setattr(triton_kernels, "_CHUNK_BYTES", chunk)
    monkeypatch.setattr(triton_kernels, "_BLOCK_BYTES", block)
    plan = small_plan(kv=16, conv=6, ssm=10)
    with allocate_pool(plan, device, max_blocks=30, layout=layout) as p:
        assert [s.row_bytes for s in p.slots] == [80, 16, 16]
        fill_random(p.tensors, seed=2)
        ids = kernels.page_ids(p, [29, 0, 13, 14, 2])
        want, got = kernels.new_staging(p, 5), kernels.new_staging(p, 5)
        kernels.gather(p, ids, want)
        triton_kernels.gather(p, ids, got)
        assert torch.equal(want, got)
        fill_random([got], seed=8)
        original = snapshot(p)
        triton_kernels.scatter(p, ids, got)
        check = kernels.new_staging(p, 5)
        kernels.gather(p, ids, check)
        assert torch.equal(check, got)
        others = [i for i in range(30) if i not in (29, 0, 13, 14, 2)]
        assert all(torch.equal(a[others], b[others]) for a, b in zip(p.tensors, original,
                                                                     strict=True))


def test_triton_chunks_stay_within_the_grid_for_any_row():
    # 48-byte rows: one 64-byte block and chunk; 64 KiB chunks up to 4 GiB rows; a 24 GiB
    # page-major row (Qwen3-Next at block 2**20) needs 512 KiB chunks: 49,228 of them
    assert triton_kernels._block_and_chunk(48) == (64, 64)
    assert triton_kernels._block_and_chunk(1 << 20) == (8192, 65536)
    row = 25_809_321_984
    block, chunk = triton_kernels._block_and_chunk(row)
    assert (block, chunk) == (8192, 1 << 19) and -(-row // chunk) == 49_228 <= 65_535


def test_triton_handles_odd_byte_rows(device, layout):
    # kv 3 B/slot, conv 5 B, ssm 7 B: ceil(12 / 3) = 4 = block 4, so P = 4 and rows are
    # 12 + 12 = 24 (slot 0) and 12 B: units of 4 bytes, not 16 (a 48-byte page: 16 page-major).
    with allocate_pool(small_plan(kv=3, conv=5, ssm=7), device, max_blocks=9,
                       layout=layout) as p:
        assert [s.row_bytes for s in p.slots] == [24, 12, 12]
        fill_random(p.tensors, seed=4)
        want, got = kernels.new_staging(p, 3), kernels.new_staging(p, 3)
        kernels.gather(p, [8, 1, 4], want)
        triton_kernels.gather(p, [8, 1, 4], got)
        assert torch.equal(want, got)


class _HopperWithoutAGpu:
    """A stand-in Triton driver naming an H200's target (sm_90): Triton then compiles for it,
    down to a cubin through its bundled ptxas, with nothing to launch on."""

    def __init__(self):
        from triton.backends.compiler import GPUTarget

        self.target = GPUTarget("cuda", 90, 32)

    def is_active(self):
        return True

    def get_current_target(self):
        return self.target

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_active_torch_device(self):
        return torch.device("cpu")

    def map_python_to_cpp_type(self, ty):
        return ty


@pytest.mark.parametrize("kv", [2048, 3])  # KiB rows of 16-byte units; odd rows of a few bytes
def test_fused_kernel_compiles_for_an_h200(layout, monkeypatch, kv):
    """The interpreter checks what the kernel computes; this checks that Triton compiles what
    the movers launch for a Hopper GPU (a compile error would otherwise first show on one).
    Rows of whole 16-byte units copy with 128-bit vector loads and stores."""
    from triton.runtime.driver import driver

    monkeypatch.setattr(driver, "_active", _HopperWithoutAGpu())  # restored after the test
    monkeypatch.setattr(triton_kernels, "_KERNELS", {})  # and so is the kernel it compiles
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")  # no float arithmetic here: no warning
    plan = small_plan(kv=kv, conv=96 if kv > 3 else 5, ssm=4096 if kv > 3 else 7)
    with allocate_pool(plan, "cpu", max_blocks=8, layout=layout) as p:
        ids = kernels.page_ids(p, [7, 0, 3])
        staging = kernels.new_staging(p, 3)
        for gather_rows in (True, False):
            grid, args, constants = triton_kernels.launch_arguments(p, ids, staging, gather_rows)
            compiled = triton_kernels._kernel(False).warmup(*args, grid=grid, **constants)
            assert compiled.metadata.target.arch == 90 and compiled.asm["cubin"]
            moves = compiled.asm["ptx"]
            wide = "ld.global.v2.b64" in moves and "st.global.v2.b64" in moves
            assert wide == (kv == 2048), constants


def test_host_mirror_round_trip(pool):
    host = kernels.new_staging(pool, len(IDS), device="cpu", pin=pool.device.type == "cuda")
    original = snapshot(pool)
    kernels.copy_to_host(pool, IDS, host)
    if pool.device.type == "cuda":
        torch.cuda.synchronize()
    assert torch.equal(host, expected_staging(pool, IDS))
    for t in pool.tensors:
        t[IDS] = 0
    kernels.copy_from_host(pool, IDS, host)
    for now, before in zip(pool.tensors, original, strict=True):
        assert torch.equal(now, before)


def test_state_row_copy_moves_only_state_rows(pool):
    original = snapshot(pool)
    moved = kernels.copy_state_rows(pool, 5, 9)
    assert moved == 3 * 352  # conv + ssm of the three linear-attention layers
    slab0, slab1, slab2 = pool.tensors
    assert torch.equal(slab0[9, :352], original[0][5, :352])  # LA0 state copied
    assert torch.equal(slab0[9, 352:], original[0][9, 352:])  # FA0 KV of page 9 kept
    assert torch.equal(slab1[9], original[1][5]) and torch.equal(slab2[9], original[2][5])
    others = [i for i in range(50) if i != 9]
    for now, before in zip(pool.tensors, original, strict=True):
        assert torch.equal(now[others], before[others])


def test_state_ranges_merge_across_slots_in_a_page_major_row(device):
    # Slot 0: state [0, 352), KV [352, 864); slots 1 and 2 are state only, 352 B each. Slot-major:
    # three ranges, one per slot. Page-major: slot 0's state, then slots 1 and 2 as one run
    # [864, 1568), so a state-row copy makes two copies per page instead of three.
    with allocate_pool(small_plan(), device, max_blocks=4) as p:
        assert p.state_ranges_by_part == ((0, 0, 352), (1, 0, 352), (2, 0, 352))
    with allocate_pool(small_plan(), device, max_blocks=4, layout=PAGE_MAJOR) as p:
        assert p.state_ranges_by_part == ((0, 0, 352), (0, 864, 1568))
        assert sum(end - start for _, start, end in p.state_ranges_by_part) == (
            p.state_bytes_per_page) == 3 * 352


def test_state_row_copy_in_bulk_matches_one_by_one(pool):
    src, dst = list(range(0, 20)), list(range(49, 29, -1))  # 20 pairs: the index-kernel path
    original = snapshot(pool)
    assert kernels.copy_state_rows(pool, src, dst) == 20 * 3 * 352
    for s, d in zip(src, dst, strict=True):
        assert torch.equal(pool.tensors[0][d, :352], original[0][s, :352])
        assert torch.equal(pool.tensors[0][d, 352:], original[0][d, 352:])
        assert torch.equal(pool.tensors[2][d], original[2][s])


def test_state_row_copy_refusals(pool):
    with pytest.raises(ValueError, match="share a page id"):
        kernels.copy_state_rows(pool, [1, 2], [2, 3])
    with pytest.raises(ValueError, match="^src has 2 page ids and dst 1: pair them one to one$"):
        kernels.copy_state_rows(pool, [1, 2], [3])
    with pytest.raises(ValueError, match="^src has 1 page id and dst 2: pair them one to one$"):
        kernels.copy_state_rows(pool, [1], [3, 4])
    plan = plan_tensors(components_from_layers(layer_types=["full_attention"] * 2,
                                               kv_bytes_per_slot=8, state_const_bytes={}),
                        block_size=4, alignment=4, budget_bytes=640)
    with allocate_pool(plan, pool.device) as p, pytest.raises(ValueError, match="no state rows"):
        kernels.copy_state_rows(p, 0, 1)


def test_bad_ids_are_refused(pool):
    staging = kernels.new_staging(pool, 2)
    with pytest.raises(ValueError, match="page id 50, outside this pool's 0..49"):
        kernels.gather(pool, [1, 50], staging)
    with pytest.raises(ValueError, match="page id -1"):
        kernels.gather(pool, [-1, 2], staging)
    with pytest.raises(ValueError, match="repeats a page id"):
        kernels.scatter(pool, [3, 3], staging)
    with pytest.raises(ValueError, match="empty"):
        kernels.gather(pool, [], staging)
    with pytest.raises(ValueError, match=r"ids\[0\] must be a whole page id"):
        kernels.gather(pool, [1.5, 2], staging)
    with pytest.raises(ValueError, match="1-D integer tensor"):
        kernels.gather(pool, torch.tensor([1.0, 2.0]), staging)
    with pytest.raises(ValueError, match="staging holds 3136 bytes but 3 pages"):
        kernels.gather(pool, [1, 2, 3], staging)
    with pytest.raises(ValueError, match="repeats a page id"):
        triton_kernels.scatter(pool, [3, 3], staging)


def test_a_staging_buffer_of_no_pages_is_refused_in_the_words_of_every_bound(pool):
    # was "count must be a positive number of pages, got 0", worded apart from the rest
    for count, message in ((0, "count 0 must be positive: give 1 or more"),
                           (-2, "count -2 must be positive: give 1 or more"),
                           (True, "count True (bool) must be a whole number: give 1 or more"),
                           ("3", "count '3' (str) must be a whole number: give 1 or more")):
        with pytest.raises(ValueError) as caught:
            kernels.new_staging(pool, count)
        assert str(caught.value) == message


def test_many_pages_in_random_order_round_trip_bit_exactly(device, layout):
    # 8,000 pages (slot 0 spans 6.6 MiB: huge pages on the CPU), 1,000 ids in random order.
    with allocate_pool(small_plan(budget=10**8), device, max_blocks=8000, layout=layout) as pool:
        fill_random(pool.tensors, seed=3)
        pool.tensors[0].view(torch.int64)[::3, 0] = 0x7FF0000000000001  # signalling NaN rows
        ids = torch.randperm(8000, generator=torch.Generator().manual_seed(9))[:1000].tolist()
        original = snapshot(pool)
        staging = kernels.new_staging(pool, len(ids))
        kernels.gather(pool, ids, staging)
        assert torch.equal(staging.cpu(), expected_staging(pool, ids))
        for t in pool.tensors:
            t[ids] = 0
        kernels.scatter(pool, ids, staging)
        assert all(torch.equal(a, b) for a, b in zip(pool.tensors, original, strict=True))


def test_page_offsets_past_2_gib_move_exactly(device):
    # Pools run to 100+ GB, so a row's offset must not be worked out in 32 bits. Components of
    # kv 1, conv 3, ssm 2 B at block 4 make a 19-byte page-major row: the fused kernel copies
    # single bytes (unit 1), so its element offsets are byte offsets, and 120,000,000 blocks
    # put page 113,025,456 at byte 2,147,483,664 (past 2**31) and the last page at
    # 2,279,999,981. The 2.28 GB pool is never filled: only the rows moved are written, so on
    # the CPU only their memory pages are touched.
    from gpu_plans import small_components

    plan = plan_component_tensors(small_components(kv=1, conv=3, ssm=2), block_size=4,
                                  budget_bytes=19 * 120_000_000)
    with allocate_pool(plan, device, max_blocks=120_000_000, layout=PAGE_MAJOR) as pool:
        (buffer,) = pool.page_parts
        ids = [119_999_999, 3, 113_025_456, 119_999_998]
        assert ids[2] * 19 == 2_147_483_664 > 2**31
        rows = torch.randint(0, 256, (4, 19), dtype=torch.uint8,
                             generator=torch.Generator().manual_seed(12))
        neighbours = [0, 1, 2, 113_025_455, 113_025_457]
        buffer[neighbours] = 0  # torch.empty: a GPU hands back what an earlier test left
        buffer[ids] = rows.to(buffer.device)
        for gather, scatter in ((kernels.gather, kernels.scatter),
                                (triton_kernels.gather, triton_kernels.scatter)):
            staging = kernels.new_staging(pool, 4)
            gather(pool, ids, staging)
            assert torch.equal(staging.view(4, 19).cpu(), rows)  # page by page, in id order
            buffer[ids] = 0
            scatter(pool, ids, staging)
            assert torch.equal(buffer[ids].cpu(), rows)
            assert not buffer[neighbours].any()  # their neighbours untouched


def test_page_ids_keep_their_own_copy_of_the_ids(pool):
    # validated ids must not follow a caller's later edits (a CPU int64 tensor would otherwise
    # share its memory, so an out-of-range edit would reach the kernels unchecked)
    ids = torch.tensor([3, 5], dtype=torch.int64)
    pages = kernels.page_ids(pool, ids)
    ids[0] = pool.num_blocks + 7
    assert pages.host.tolist() == [3, 5] and pages.tensor.cpu().tolist() == [3, 5]


@pytest.mark.parametrize("mover", ["torch", "triton"])
def test_page_ids_of_a_larger_pool_or_a_released_one_are_refused(device, layout, mover):
    # ids validated on 50 blocks, used on 4: refused before any kernel reads (the fused kernel
    # does not check bounds); the same ids fit another pool of 50
    gather = kernels.gather if mover == "torch" else triton_kernels.gather
    with allocate_pool(small_plan(), device, max_blocks=50, layout=layout) as big:
        ids = kernels.page_ids(big, [2, 49])
        kept_staging = kernels.new_staging(big, 2)
        with allocate_pool(small_plan(), device, max_blocks=4, layout=layout) as small:
            staging = kernels.new_staging(small, 2)
            with pytest.raises(ValueError, match="page id 49, outside this pool's 0..3"):
                gather(small, ids, staging)
        with allocate_pool(small_plan(), device, max_blocks=50, layout=layout) as twin:
            fill_random(twin.tensors, seed=5)
            staging = kernels.new_staging(twin, 2)
            gather(twin, ids, staging)
            assert torch.equal(staging.cpu(), expected_staging(twin, [2, 49]))
    with pytest.raises(ValueError, match="this pool has been released"):
        gather(big, ids, kept_staging)
