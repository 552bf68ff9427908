"""Small plans with hand-derived sizes, shared by the GPU lab tests."""

import torch

from flatkv.plan import components_from_layers, plan_tensors

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def small_components(kv=64, conv=96, ssm=256):
    """3 linear-attention layers and 1 full-attention layer (one 'LLLF' pattern)."""
    return components_from_layers(
        layer_types=["linear_attention"] * 3 + ["full_attention"],
        kv_bytes_per_slot=kv,
        state_const_bytes={"conv": conv, "ssm": ssm},
    )


def small_plan(budget=1_000_000, **sizes):
    # By hand (default sizes): state row conv 96 + ssm 256 = 352 B; KV row 64 B per token slot.
    # Equalizer: ceil(352 / 64) = 6 > block 4, so P = 8 (multiple of alignment 4); KV row 512 B.
    # Slots: 0 = [LA0 conv@0, LA0 ssm@96, FA0 kv@0 (row starts at 352)] = 864 B; 1 and 2 = 352 B.
    # Page = 864 + 352 + 352 = 1568 B; 1,000,000 // 1568 = 637 blocks.
    return plan_tensors(small_components(**sizes), block_size=4, alignment=4, budget_bytes=budget)
