"""The flat memory planner: page geometry and slot bindings of a hybrid KV cache.

Same decisions and vocabulary as the reference planner (``shared/reference/flat_memory_plan.py``),
written again so that it validates its input, runs in time linear in the number of components and
stays exact on huge numbers. Standard library only: the app, the CLI and the tests import it
without torch, streamlit or pandas.

Vocabulary
    component   one cache tensor of one cache layer (``kv`` of an attention layer, ``conv`` and
                ``ssm`` of a state layer). *Linear* components grow with the page size P
                (``bytes_per_slot`` per token slot); *constant* ones do not (``const_bytes``).
    row         everything of one ``(group, layer)`` packed side by side, ``[conv | ssm]``; each
                component sits at its ``row_offset``. A row is all-linear or all-constant.
    slot        one tensor of the plan: slot j holds the j-th layer of every group, and all slots
                share one page-id space, so one block id addresses a row in every slot.
    block_size  P, token slots per page. Constant rows inflate P until the widest linear row
                covers the widest constant row (the equalizer).
    page id     = block id: one index into the shared id space. "Page" is what one group keeps
                at an id (one row per layer of the group); "block" is everything the id
                addresses over all slots.
    bytes       ``Row.row_bytes(P)``: one (group, layer) row. A slot row
                (``TensorPlan.nbytes // num_blocks``; ``row_bytes`` of a slot in analysis and
                flatkv.gpu) is one slot's rows side by side. ``BlockGeometry.block_bytes``: one
                block id over all slots. The page row: the widest row at P, what a uniform-page
                engine pads every row to (``Equalizer.page_row_bytes``; vLLM's page size). The GPU
                benchmark's ``page_bytes`` is what one page id moves: the block's bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from flatkv.units import quoted_value

FULL_ATTENTION = "full_attention"
SLIDING_ATTENTION = "sliding_attention"
# Llama 4's chunked local attention: a layer sees only the tokens of its own chunk of
# attention_chunk_size (transformers' layer_types name), so it keeps at most a chunk of history.
CHUNKED_ATTENTION = "chunked_attention"
LINEAR_ATTENTION = "linear_attention"
# Every cache-layer label the profile, the engine layouts and the app know, in display order.
LAYER_LABELS = (FULL_ATTENTION, SLIDING_ATTENTION, CHUNKED_ATTENTION, LINEAR_ATTENTION)

# Why packed slabs refuse a model without attention layers; each caller adds its own fix.
PACKED_NEEDS_HISTORY = ("packed slabs size P against a KV history row, and this model has none "
                        "(no attention layer, only state)")

# Labels whose layers carry recurrent state (constant rows), not KV history.
STATE_LAYER_TYPES = frozenset({LINEAR_ATTENTION})


@dataclass(frozen=True)
class ComponentSpec:
    """One cache tensor of one cache layer: ``bytes_per_slot * P + const_bytes`` per page."""

    group_id: str
    layer: int
    component: str
    bytes_per_slot: int  # linear in P; 0 for constant components
    const_bytes: int  # constant in P; 0 for linear components

    def bytes_per_block(self, block_size: int) -> int:
        return self.bytes_per_slot * block_size + self.const_bytes

    @property
    def is_linear(self) -> bool:
        return self.bytes_per_slot > 0


@dataclass(frozen=True)
class BlockGeometry:
    """P, the bytes one block id takes, and how many block ids the budget holds.

    ``block_bytes`` is what its producer sizes: ``solve_page_geometry`` one page row (the widest
    (group, layer) row at P, before any budget); ``plan_tensors`` one row in every slot tensor
    (a whole block id); ``plan_component_tensors`` every component's row plus the reserved
    bytes per block.
    """

    block_size: int
    block_bytes: int
    num_blocks: int = 0  # filled by the planners from the memory budget


@dataclass(frozen=True)
class LayerBinding:
    slot: int
    group_id: str
    layer: int
    component: str
    nbytes_per_block: int
    row_offset: int  # byte offset of this component within its (group, layer) page row


@dataclass(frozen=True)
class TensorPlan:
    name: str
    nbytes: int
    bindings: tuple[LayerBinding, ...]


@dataclass(frozen=True)
class FlatMemoryPlan:
    geometry: BlockGeometry
    tensors: tuple[TensorPlan, ...]


# --------------------------------------------------------------------------------------------
# Validation: every public function checks its arguments and names the field, value and fix.


def bound_refusal(value: object, minimum: int = 0, maximum: int | None = None) -> str | None:
    """What is wrong with ``value`` as a whole number in ``[minimum, maximum]``, in the words
    that follow its name and value in a refusal (``must be positive``, ``is too large to be
    real``), or None where it is one: every bound the library, the CLI's flags and a
    config.json's fields check reads the same (``--block-size 0 must be positive: give 1 or
    more``), where each wrote its own ("must be positive, got 0; ...")."""
    if isinstance(value, bool) or not isinstance(value, int):
        return "must be a whole number"
    if value < minimum:
        return ("must be positive" if minimum == 1 else "must not be negative" if minimum == 0
                else f"must be at least {minimum:,}")
    if maximum is not None and value > maximum:  # a typo or a corrupt config, not a plan
        return "is too large to be real"
    return None


def bound_fix(value: object, minimum: int = 0, maximum: int | None = None) -> str:
    """The fix of a ``bound_refusal``, the side of the range ``value`` missed: ``give 1 or
    more`` (a sanity bound of 2**40 tokens is no advice to one who typed 0), ``give 1,024 or
    less``."""
    if maximum is not None and isinstance(value, int) and value > maximum:
        return f"give {maximum:,} or less"
    return f"give {minimum:,} or more"


def check_int(field: str, value: object, *, minimum: int = 0, maximum: int | None = None,
              hint: str = "") -> int:
    """``value`` if it is an int (not a bool) in ``[minimum, maximum]``; else a ValueError
    naming ``field``, the value and the fix: ``block_size 0 must be positive: give 1 or
    more``, then ``hint`` (joined by a comma where it reads ``or ...``, else a semicolon).

    ``maximum`` guards sizes read from files: a value beyond it is a typo or a corrupt config,
    and is refused before it turns into a plausible-looking but absurd plan.
    """
    wrong = bound_refusal(value, minimum, maximum)
    if wrong is None:
        return value  # type: ignore[return-value]  (bound_refusal checked it is an int)
    shown = (figure_text(value) if isinstance(value, int) and not isinstance(value, bool)
             else f"{quoted_value(value)} ({type(value).__name__})")
    tail = "" if not hint else f", {hint}" if hint.startswith("or ") else f"; {hint}"
    raise ValueError(f"{field} {shown} {wrong}: {bound_fix(value, minimum, maximum)}{tail}")


def cdiv(a: int, b: int) -> int:
    """Exact integer ceiling of a / b for b > 0 (no floats: byte counts pass 2**53)."""
    return -(-a // b)


def int_text(value: int) -> str:
    """``value`` for an error message: its digits, or how many there are past 30 of them (a
    4,000-digit number would fill the screen), its sign kept ("a negative 40-digit number":
    -10**39 is not 10**39)."""
    if abs(value) < 10**30:
        return str(value)
    return f"a {'negative ' if value < 0 else ''}{len(str(abs(value)))}-digit number"


def figure_text(value: int) -> str:
    """A count in an error: thousands separated, or how many digits past 30 (``int_text``)."""
    return f"{value:,}" if abs(value) < 10**30 else int_text(value)


def _is_count(value: object) -> bool:
    return type(value) is int and value >= 0


def check_components(components: Iterable[ComponentSpec]) -> tuple[ComponentSpec, ...]:
    """Validate a component list: non-empty, well-typed, each all-linear or all-constant, unique."""
    if not isinstance(components, Iterable):
        raise ValueError(f"components is {components!r}: give a list of ComponentSpec (e.g. "
                         "from components_from_layers)")
    comps = tuple(components)
    if not comps:
        raise ValueError("components is empty: a plan needs at least one ComponentSpec")
    keys = set()
    for c in comps:
        # Fast path: one cheap test per component; the detailed message only on failure.
        if not (
            type(c) is ComponentSpec
            and type(c.group_id) is str
            and c.group_id
            and type(c.component) is str
            and c.component
            and _is_count(c.layer)
            and _is_count(c.bytes_per_slot)
            and _is_count(c.const_bytes)
            and (c.bytes_per_slot > 0) != (c.const_bytes > 0)
        ):
            _explain_bad_component(comps.index(c), c)
        keys.add((c.group_id, c.layer, c.component))
    if len(keys) != len(comps):
        seen: set[tuple[str, int, str]] = set()
        for i, c in enumerate(comps):
            key = (c.group_id, c.layer, c.component)
            if key in seen:
                raise ValueError(
                    f"components[{i}] repeats (group, layer, component) {key}: give each "
                    "component once"
                )
            seen.add(key)
    return comps


def _explain_bad_component(i: int, c: object) -> None:
    where = f"components[{i}]"
    if not isinstance(c, ComponentSpec):
        raise ValueError(f"{where} must be a ComponentSpec, got {type(c).__name__}")
    if not isinstance(c.group_id, str) or not c.group_id:
        raise ValueError(f"{where}.group_id must be a non-empty string, got {c.group_id!r}")
    if not isinstance(c.component, str) or not c.component:
        raise ValueError(f"{where}.component must be a non-empty string, got {c.component!r}")
    check_int(f"{where}.layer", c.layer)
    check_int(f"{where}.bytes_per_slot", c.bytes_per_slot)
    check_int(f"{where}.const_bytes", c.const_bytes)
    raise ValueError(
        f"{where} ({c.group_id}/{c.layer}/{c.component}) has bytes_per_slot="
        f"{c.bytes_per_slot} and const_bytes={c.const_bytes}: exactly one of them must be "
        "positive (linear KV history or constant state)"
    )


# --------------------------------------------------------------------------------------------
# From layer labels to components.


def occurrence_index(labels: Iterable[object]) -> list[int]:
    """For each position, how many earlier positions carry the same label.

    This is the slab pairing order: the k-th full-attention layer and the k-th linear-attention
    layer are both ``layer == k`` and end up in slot k.
    """
    counts: dict[object, int] = {}
    out: list[int] = []
    for label in labels:
        idx = counts.get(label, 0)
        counts[label] = idx + 1
        out.append(idx)
    return out


def state_const_bytes(
    conv_shape: Sequence[int] | None, conv_dtype: object, ssm_shape: Sequence[int] | None,
    ssm_dtype: object,
) -> dict[str, int]:
    """Constant per-page bytes of one state layer: ``{"conv": ..., "ssm": ...}``, in row order;
    a layer with no ssm state (``ssm_shape`` None: LFM2's short convolution) has conv only, one
    with no conv state (``conv_shape`` None: MiniMax's lightning attention) ssm only.

    Shapes are the per-layer state tensor shapes; a dtype is anything with an ``itemsize``
    (a numpy or torch dtype) or a plain int of bytes per element.
    """
    if conv_shape is None and ssm_shape is None:
        raise ValueError("conv_shape and ssm_shape are both None: a state layer keeps at least "
                         "one state tensor; give its shape")
    tensors = {}
    if conv_shape is not None:
        tensors["conv"] = _shape_bytes("conv_shape", conv_shape, "conv_dtype", conv_dtype)
    if ssm_shape is not None:
        tensors["ssm"] = _shape_bytes("ssm_shape", ssm_shape, "ssm_dtype", ssm_dtype)
    return tensors


def _shape_bytes(shape_field: str, shape: Sequence[int], dtype_field: str, dtype: object) -> int:
    itemsize = getattr(dtype, "itemsize", dtype)  # a dtype's, or the bytes given (2.5 named)
    check_int(
        f"{dtype_field} itemsize", itemsize, minimum=1, hint="pass a dtype or bytes per element"
    )
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence) or not shape:
        raise ValueError(f"{shape_field} must be a non-empty sequence of dims, got {shape!r}")
    total = itemsize
    for i, dim in enumerate(shape):
        total *= check_int(f"{shape_field}[{i}]", dim, minimum=1)
    return total


def components_from_layers(
    *,
    layer_types: Sequence[str],
    kv_bytes_per_slot: int,
    state_const_bytes: Mapping[str, int],
    sliding_kv_bytes_per_slot: int | None = None,
) -> list[ComponentSpec]:
    """ComponentSpecs of a layer-type list.

    History layers (any label not in STATE_LAYER_TYPES) get one linear ``kv`` component of
    ``kv_bytes_per_slot`` (``sliding_kv_bytes_per_slot`` for sliding layers where it is given:
    models whose sliding layers keep other heads than their full ones); state layers get one
    constant component per entry of ``state_const_bytes``, in its order (which becomes the
    row_offset order). ``layer`` is the occurrence index within the label.
    """
    if isinstance(layer_types, str) or not isinstance(layer_types, Iterable):
        raise ValueError(f"layer_types is {layer_types!r}: give a list of labels, e.g. "
                         "['linear_attention', 'full_attention']")  # a str is one per letter
    if not isinstance(state_const_bytes, Mapping):
        raise ValueError(f"state_const_bytes is {state_const_bytes!r}: give a mapping of tensor "
                         "name to bytes, e.g. {'conv': 49152, 'ssm': 2097152}, or {}")
    labels = list(layer_types)
    if not labels:
        raise ValueError("layer_types is empty: give at least one cache layer label")
    for i, label in enumerate(labels):
        if not isinstance(label, str) or not label:
            raise ValueError(f"layer_types[{i}] must be a non-empty string, got {label!r}")
    has_history = any(label not in STATE_LAYER_TYPES for label in labels)
    has_state = any(label in STATE_LAYER_TYPES for label in labels)
    if has_history:
        check_int(
            "kv_bytes_per_slot",
            kv_bytes_per_slot,
            minimum=1,
            hint="attention layers need the bytes one token adds to one layer",
        )
    if sliding_kv_bytes_per_slot is not None:
        check_int("sliding_kv_bytes_per_slot", sliding_kv_bytes_per_slot, minimum=1,
                  hint="or None when sliding layers add kv_bytes_per_slot too")
    state_items = list(state_const_bytes.items())
    if has_state:
        if not state_items:
            raise ValueError(
                "state_const_bytes is empty but layer_types has linear_attention layers: give the "
                "state tensors, e.g. {'conv': 49152, 'ssm': 2097152}"
            )
        for name, nbytes in state_items:
            check_int(f"state_const_bytes[{name!r}]", nbytes, minimum=1)
    elif state_items:  # a typo'd label ("linear") would drop the state without a word
        raise ValueError(
            f"state_const_bytes names {', '.join(repr(k) for k, _ in state_items)} but no layer "
            f"is {LINEAR_ATTENTION!r} (the labels are {', '.join(sorted(set(labels)))}): label "
            "the state layers linear_attention, or give {} for a model without state")

    comps: list[ComponentSpec] = []
    for label, idx in zip(labels, occurrence_index(labels)):
        if label in STATE_LAYER_TYPES:
            comps.extend(ComponentSpec(label, idx, name, 0, nbytes) for name, nbytes in state_items)
        else:
            per_slot = (sliding_kv_bytes_per_slot if label == SLIDING_ATTENTION
                        and sliding_kv_bytes_per_slot is not None else kv_bytes_per_slot)
            comps.append(ComponentSpec(label, idx, "kv", per_slot, 0))
    return comps


# --------------------------------------------------------------------------------------------
# Rows and page geometry.


@dataclass(frozen=True)
class Row:
    """All components of one (group, layer), in input order, packed side by side."""

    group_id: str
    layer: int
    components: tuple[ComponentSpec, ...]
    linear_bytes: int  # bytes per token slot of the whole row (0 for a state row)
    const_bytes: int  # constant bytes of the whole row (0 for a history row)

    def row_bytes(self, block_size: int) -> int:
        return self.linear_bytes * block_size + self.const_bytes


def group_rows(components: Iterable[ComponentSpec]) -> dict[str, list[Row]]:
    """Rows per group: groups in order of first appearance, layers likewise (the slot order).

    One pass over the components; the reference rescans them for every (slot, group).
    Raises ValueError for a row that mixes linear and constant components.
    """
    comps = check_components(components)
    by_key: dict[tuple[str, int], list[ComponentSpec]] = {}
    for c in comps:
        by_key.setdefault((c.group_id, c.layer), []).append(c)
    groups: dict[str, list[Row]] = {}
    for (gid, layer), members in by_key.items():
        linear = sum(c.bytes_per_slot for c in members)
        const = sum(c.const_bytes for c in members)
        if linear and const:
            names = ", ".join(c.component for c in members)
            raise ValueError(
                f"row ({gid}, layer {layer}) mixes linear and constant components ({names}): a "
                "row must be all-linear (KV history) or all-constant (state); give the constant "
                "tensors their own group"
            )
        groups.setdefault(gid, []).append(Row(gid, layer, tuple(members), linear, const))
    return groups


@dataclass(frozen=True)
class Equalizer:
    """The equalizer's inputs and decision, kept for explaining it.

    ``needed`` is ``ceil(max_const / max_linear)``: the fewest token slots whose widest history
    row covers the widest state row. P stays ``requested_block_size`` when that already covers
    it, else P is ``needed`` rounded up to a multiple of ``alignment``.
    """

    requested_block_size: int
    alignment: int
    max_linear: int
    max_const: int
    needed: int  # 0 when there is no constant row
    block_size: int
    page_row_bytes: int  # max(max_linear * P, max_const): the widest row at P

    @property
    def inflated(self) -> bool:
        return self.block_size != self.requested_block_size

    def block_size_at(self, alignment: int) -> int:
        """The P this equalizer would choose with another alignment."""
        check_int("alignment", alignment, minimum=1)
        return _equalize(self.requested_block_size, alignment, self.needed)

    def steps(self) -> list[str]:
        """The decision in words, one step per line, with the numbers in (for teaching)."""
        requested = (f"Requested block_size {self.requested_block_size:,} token slot"
                     f"{'' if self.requested_block_size == 1 else 's'}")
        if self.max_linear == 0:
            return [
                f"{requested}.",
                "No per-token (KV history) row: state rows do not depend on P, so P stays the "
                "requested block size.",
            ]
        steps = [
            f"{requested}, alignment {self.alignment:,}.",
            f"Widest per-token (KV history) row: {self.max_linear:,} B per token slot, so "
            f"{self.max_linear * self.requested_block_size:,} B per page at the requested size.",
        ]
        if self.max_const == 0:
            steps.append("No constant (state) rows: P stays the requested block size.")
            return steps
        need = (
            f"Widest constant (state) row: {self.max_const:,} B. Slots needed to cover it: "
            f"ceil({self.max_const:,} / {self.max_linear:,}) = {self.needed:,}"
        )
        if not self.inflated:
            steps.append(f"{need} <= {self.requested_block_size:,}: P stays the same.")
        else:
            rounding = self.block_size - self.needed
            steps.append(f"{need}.")
            steps.append(
                f"{self.needed:,} > {self.requested_block_size:,}: round up to a multiple of "
                f"{self.alignment:,} -> P = {self.block_size:,} "
                + (f"({rounding:,} token slot{'' if rounding == 1 else 's'} of rounding)."
                   if rounding else "(a multiple already: no rounding).")
            )
        return steps

    def formula(self) -> str:
        """P as one line of arithmetic."""
        if not self.inflated:
            return f"P = {self.block_size:,} (requested block size; no inflation needed)"
        return (
            f"P = {self.alignment:,} x ceil(ceil({self.max_const:,} / {self.max_linear:,}) / "
            f"{self.alignment:,}) = {self.block_size:,}"
        )


def _equalize(block_size: int, alignment: int, needed: int) -> int:
    if needed <= block_size:
        return block_size
    return alignment * cdiv(needed, alignment)


def equalize(components: Iterable[ComponentSpec], *, block_size: int, alignment: int) -> Equalizer:
    """Run the equalizer over the rows of ``components`` and keep its reasoning."""
    check_int("block_size", block_size, minimum=1)
    check_int("alignment", alignment, minimum=1)
    rows = [row for group in group_rows(components).values() for row in group]
    return equalize_rows(rows, block_size, alignment)


def equalize_rows(rows: Sequence[Row], block_size: int, alignment: int) -> Equalizer:
    """The equalizer over already grouped rows (see ``equalize``)."""
    if not rows:
        raise ValueError("rows is empty: the equalizer needs at least one (group, layer) row; "
                         "give the rows of at least one component")
    max_linear = max(row.linear_bytes for row in rows)
    max_const = max(row.const_bytes for row in rows)
    needed = 0
    if max_const > 0:
        if max_linear == 0:
            raise ValueError(f"{PACKED_NEEDS_HISTORY}: add an attention layer, or plan "
                             "state-only models with plan_component_tensors")
        needed = cdiv(max_const, max_linear)
    p = _equalize(block_size, alignment, needed)
    return Equalizer(
        requested_block_size=block_size,
        alignment=alignment,
        max_linear=max_linear,
        max_const=max_const,
        needed=needed,
        block_size=p,
        page_row_bytes=max(max_linear * p, max_const),
    )


def alignment_or_block_size(alignment: int | None, block_size: int) -> int:
    """The alignment P rounds up to: ``alignment``, or ``block_size`` when it is None (the app's
    and the CLI's "auto"), so an inflated P stays a multiple of the configured block size."""
    return block_size if alignment is None else alignment


def solve_page_geometry(
    components: Iterable[ComponentSpec], *, block_size: int, alignment: int
) -> BlockGeometry:
    """Smallest P >= block_size (a multiple of ``alignment`` when inflated) such that the widest
    linear row covers the widest constant row. Its block_bytes is that widest row at P, the
    page row, as in the reference planner's ``solve_page_geometry``; a TensorPlan's geometry
    (``plan_tensors``) holds a whole block's bytes over all slots instead."""
    eq = equalize(components, block_size=block_size, alignment=alignment)
    return BlockGeometry(block_size=eq.block_size, block_bytes=eq.page_row_bytes)


def config_equalizer(rows: Sequence[Row], block_size: int, alignment: int) -> Equalizer:
    """The config-level P both planners use (the reference's ``equalized_block_size``).

    The engine equalizes P once per model and hands it to whichever planner it runs, so packed
    slabs and per-component tensors see the same page size. A state-only model has no history
    row to size P against: there P stays as requested (state rows do not depend on P); only the
    per-component planner can plan it, and the packed planner says why not.
    """
    if any(r.linear_bytes for r in rows):
        return equalize_rows(rows, block_size, alignment)
    max_const = max(r.const_bytes for r in rows)
    return Equalizer(block_size, alignment, 0, max_const, 0, block_size, max_const)


def equalized_block_size(
    *,
    layer_types: Sequence[str],
    kv_bytes_per_slot: int,
    state_const_bytes: Mapping[str, int],
    block_size: int,
    alignment: int | None = None,
) -> int:
    """Effective P of a layer-type profile. ``alignment`` defaults to ``block_size``, so an
    inflated P stays a multiple of the configured block size. The reference planner's entry
    point, kept under its name so the differential tests pin the two against each other; the
    app and the CLI reach the same P through ``solve_page_geometry``."""
    comps = components_from_layers(
        layer_types=layer_types,
        kv_bytes_per_slot=kv_bytes_per_slot,
        state_const_bytes=state_const_bytes,
    )
    return solve_page_geometry(
        comps, block_size=block_size, alignment=alignment_or_block_size(alignment, block_size)
    ).block_size


# --------------------------------------------------------------------------------------------
# Planners: from geometry and a budget to tensors.


class BudgetTooSmall(ValueError):
    """A budget that holds fewer than the two blocks a plan needs (a ValueError with the
    figures, so a caller can say which of its own settings to change)."""

    def __init__(self, budget_bytes: int, block_bytes: int, what: str) -> None:
        self.budget_bytes, self.block_bytes = budget_bytes, block_bytes
        self.blocks = budget_bytes // block_bytes
        super().__init__(
            f"the budget of {budget_bytes:,} B holds {self.blocks} "
            f"block{'' if self.blocks == 1 else 's'} of {block_bytes:,} B "
            f"({what}); a plan needs at least 2: give a budget of at least "
            f"{2 * block_bytes:,} B"
        )


def _blocks_in_budget(budget_bytes: int, block_bytes: int, what: str) -> int:
    check_int("budget_bytes", budget_bytes, minimum=0)
    if block_bytes <= 0:
        raise ValueError(f"block_bytes is {block_bytes}: {what} must take some bytes per block")
    num_blocks = budget_bytes // block_bytes
    if num_blocks <= 1:
        raise BudgetTooSmall(budget_bytes, block_bytes, what)
    return num_blocks


def plan_component_tensors(
    components: Iterable[ComponentSpec],
    *,
    block_size: int,
    budget_bytes: int,
    reserved_bytes_per_block: int = 0,
) -> FlatMemoryPlan:
    """One tensor per component, no packing and no padding.

    ``num_blocks = budget // (sum of component rows + reserved_bytes_per_block)``; the reserved
    bytes carry co-resident rows outside these components (a draft model's KV on the same block
    ids). Each component is its own slot, in input order. P is not equalized here.
    """
    comps = check_components(components)
    check_int("block_size", block_size, minimum=1)
    check_int("reserved_bytes_per_block", reserved_bytes_per_block)
    row_bytes = [c.bytes_per_block(block_size) for c in comps]
    per_block = sum(row_bytes) + reserved_bytes_per_block
    num_blocks = _blocks_in_budget(budget_bytes, per_block, "all component rows")
    geometry = BlockGeometry(block_size=block_size, block_bytes=per_block, num_blocks=num_blocks)
    tensors = tuple(
        TensorPlan(
            name=f"flat_{c.group_id}_{c.layer}_{c.component}",
            nbytes=num_blocks * nbytes,
            bindings=(LayerBinding(i, c.group_id, c.layer, c.component, nbytes, 0),),
        )
        for i, (c, nbytes) in enumerate(zip(comps, row_bytes))
    )
    return FlatMemoryPlan(geometry=geometry, tensors=tensors)


def slot_rows(groups: Mapping[str, Sequence[Row]]) -> list[list[Row]]:
    """Slot j gets the j-th row of every group that has one, in group order."""
    if not groups:
        raise ValueError("groups is empty: slots pair the layers of at least one group; give "
                         "the rows of at least one component (group_rows)")
    num_slots = max(len(rows) for rows in groups.values())
    return [[rows[j] for rows in groups.values() if j < len(rows)] for j in range(num_slots)]


def slot_offsets(tensor: TensorPlan) -> tuple[int, ...]:
    """Byte offset of each of ``tensor``'s bindings within one page's slot row.

    A slot row holds its (group, layer) rows back to back in binding order, each component at
    its ``row_offset`` within its row. The analysis tables and the GPU pool's typed views both
    place bindings by this one rule, so a table never names a byte the pool puts elsewhere.
    """
    offsets: list[int] = []
    row_start = row_end = 0
    current: tuple[str, int] | None = None
    for b in tensor.bindings:
        if (b.group_id, b.layer) != current:
            current, row_start = (b.group_id, b.layer), row_end
        offsets.append(row_start + b.row_offset)
        row_end = max(row_end, offsets[-1] + b.nbytes_per_block)
    return tuple(offsets)


def check_layer_labels(plan: FlatMemoryPlan, *, reader: str) -> None:
    """ValueError where a binding's group is not a layer label (``LAYER_LABELS``). The
    planners take any group id, but ``reader`` knows a group's kind by its label alone (a
    state row from a history row, a window): a plan of other ids would be read wrongly
    without a word (a second state group's rows left out of a state-row copy)."""
    for tensor in plan.tensors:
        for b in tensor.bindings:
            if b.group_id not in LAYER_LABELS:
                raise ValueError(
                    f"plan group {b.group_id!r} (tensor {tensor.name!r}) is not a layer label: "
                    f"{reader} knows a group's kind by its label; name groups by one of "
                    f"{list(LAYER_LABELS)}, as components_from_layers does")


def plan_tensors(
    components: Iterable[ComponentSpec], *, block_size: int, alignment: int, budget_bytes: int
) -> FlatMemoryPlan:
    """Packed slabs: slot j holds the j-th layer of every group, all over one page-id space.

    A slot tensor's row is the sum of its bindings' per-block bytes; ``block_bytes`` is the sum
    over slots (one block id addresses a row in every slot), ``num_blocks = budget //
    block_bytes``, and slot j's tensor is ``num_blocks * row_j`` bytes.
    """
    check_int("block_size", block_size, minimum=1)
    check_int("alignment", alignment, minimum=1)
    groups = group_rows(components)
    eq = equalize_rows([r for rows in groups.values() for r in rows], block_size, alignment)
    p = eq.block_size

    slot_bindings: list[tuple[LayerBinding, ...]] = []
    for slot, rows in enumerate(slot_rows(groups)):
        bindings: list[LayerBinding] = []
        for row in rows:
            offset = 0
            for c in row.components:
                nbytes = c.bytes_per_block(p)
                bindings.append(
                    LayerBinding(slot, row.group_id, row.layer, c.component, nbytes, offset)
                )
                offset += nbytes
        slot_bindings.append(tuple(bindings))
    row_bytes = [sum(b.nbytes_per_block for b in bs) for bs in slot_bindings]
    block_bytes = sum(row_bytes)
    num_blocks = _blocks_in_budget(budget_bytes, block_bytes, "one row in every slot")
    geometry = BlockGeometry(block_size=p, block_bytes=block_bytes, num_blocks=num_blocks)
    tensors = tuple(
        TensorPlan(name=f"flat_slab_{slot}", nbytes=num_blocks * row_bytes[slot], bindings=bs)
        for slot, bs in enumerate(slot_bindings)
    )
    return FlatMemoryPlan(geometry=geometry, tensors=tensors)
