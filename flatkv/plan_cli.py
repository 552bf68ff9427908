"""``plan``'s output: the plan as a terminal report (``format_analysis``) and, with --context,
the requests that the plan's own layout holds (``requests_text``; in --json ``requests_json``,
beside ``analysis.plan_json``).

``flatkv.cli`` runs the command (the model, the budget, the options it refuses, the notes);
this module counts the requests and formats what it prints.
"""

from __future__ import annotations

from flatkv import strategy_cli
from flatkv.analysis import PLANNER_STRATEGY, PlanAnalysis
from flatkv.plan import STATE_LAYER_TYPES
from flatkv.profile import CacheProfile, group_name
from flatkv.strategies import StrategyResult, run_strategy
from flatkv.strategies.base import StrategyOptions
from flatkv.texttable import text_table
from flatkv.units import concurrency_text, exact_bytes, percent_text, tokens_text


def requests_at(context: strategy_cli.RequestContext, profile: CacheProfile, planner: str,
                 budget: int, options: StrategyOptions) -> StrategyResult:
    """This plan's layout (flat for packed slabs, per-component for one tensor per component)
    counted at the context, as the app's Layout page counts its plan."""
    result = run_strategy(PLANNER_STRATEGY[planner], profile, budget_bytes=budget,
                          context_tokens=context.tokens, options=options)
    if not result.applies:
        raise ValueError(f"--context {context.tokens:,}: {result.reason}")
    return result


def requests_json(result: StrategyResult) -> dict[str, object]:
    """The plan's requests in --json: the counting layout's own fields, as its to_dict
    writes them, under "layout" rather than "strategy" (a plan is no strategy)."""
    fields = result.to_dict()
    return {"layout": fields["strategy"],
            **{key: fields[key] for key in ("context_tokens", "max_concurrency",
                                            "max_concurrency_exact")}}


def requests_text(result: StrategyResult) -> str:
    """How many requests of the context the plan holds, the exact fraction beside it."""
    return (f"Requests of {tokens_text(result.context_tokens or 0)} (--context): "
            f"{concurrency_text(result.max_concurrency or 0.0)} = "
            f"{result.concurrency_numerator:,} / {result.concurrency_denominator:,}, as "
            f"`plan --strategy {result.strategy}` and `compare` count them")


def format_analysis(analysis: PlanAnalysis, *, mla: bool, title: str = "",
                    max_slots: int = 12) -> str:
    """The plan as a terminal report: why P, totals, dead weight (each group by its kind, as
    Layout's table names it: ``group_name``; ``mla``: the profile's), then the slot rows, whose
    bindings keep the planner's ids, as its JSON and CSV write them."""
    t = analysis.totals
    out = [f"Plan ({analysis.planner}){': ' + title if title else ''}", ""]
    out += ["Why this block size:"] + [f"  {line}" for line in analysis.why_block_size()]
    out += [
        "",
        text_table(
            ["figure", "value"],
            [
                ["block_size (P)", f"{t.block_size:,} tokens"],
                ["block_bytes", exact_bytes(t.block_bytes)],
                ["num_blocks", f"{t.num_blocks:,}"],
                # no history row: a page id holds no tokens (the Layout page's dash)
                ["token slots (num_blocks x P)", f"{t.token_slots:,}" if any(
                    g.group_id not in STATE_LAYER_TYPES for g in analysis.groups)
                 else "- (no attention layer: no token history)"],
                ["budget", exact_bytes(t.budget_bytes)],
                # rows in every block, whoever owns it; `compare` splits them by owner
                ["KV history rows (every block)", exact_bytes(t.kv_history_bytes)],
                ["state rows (every block)", exact_bytes(t.state_bytes)],
                ["reserved", exact_bytes(t.reserved_bytes)],
                ["unused", exact_bytes(t.unused_bytes)],
                # packed slabs: what padding every row to the page row would add; one tensor
                # per component has no page row to pad to
                ["uniform-page padding (not allocated)", exact_bytes(t.uniform_padding_bytes)]
                if analysis.planner == "packed" else
                ["padding (a tensor per component: none)", exact_bytes(t.uniform_padding_bytes)],
            ],
        ),
        "(rows by tensor, in every block whichever group owns it; --strategy flat splits the "
        "same bytes by the group a page id goes to, and counts the other groups' rows as "
        "dead weight)",
    ]
    out += [
        "",
        "Dead weight of the single page-id space (per block id owned by a group):",
        text_table(
            ["group", "layers", "used B/block", "dead B/block", "dead share"],
            [
                [
                    group_name(g.group_id, mla=mla),
                    g.num_layers,
                    f"{g.used_bytes_per_block:,}",
                    f"{g.dead_bytes_per_block:,}",
                    percent_text(g.dead_share),
                ]
                for g in analysis.groups
            ],
        ),
    ]
    rows = []
    for s in analysis.slots[:max_slots]:
        rows.append(
            [
                s.name,
                f"{s.row_bytes:,}",
                f"{s.tensor_bytes:,}",
                " | ".join(
                    f"{b.group_id}[{b.layer}].{b.component}@{b.offset:,}:{b.nbytes_per_block:,}"
                    for r in s.rows
                    for b in r.bindings
                ),
            ]
        )
    out += [
        "",
        f"Slot tensors ({len(analysis.slots)}):",
        text_table(
            ["tensor", "row B", "tensor B", "bindings (group[layer].component@offset:bytes)"], rows
        ),
    ]
    if len(analysis.slots) > max_slots:
        out.append(f"... {len(analysis.slots) - max_slots} more slot tensors (--json lists all)")
    return "\n".join(out)
