"""Page size as SGLang runs it and the whole pages its pools round to. DeepSeek's sparse attention
(NSA) runs at 64 whatever --page-size says (``page_size``, ``nsa_options``); a pool's tokens are
kept in whole pages (``whole_pages``); a byte count SGLang computes in float prints as the float
gives it (``bytes_text``). Apart so that the state, chunk and token-pool modules share them."""

from __future__ import annotations

from dataclasses import replace

from flatkv.dtypes import dtype_bytes
from flatkv.profile import CacheProfile
from flatkv.strategies.base import StrategyOptions, n


def bytes_text(value: float) -> str:
    """A byte count SGLang computes in float, as a formula shows it: ``44,236.8``, or
    ``49,152`` when whole (at most 6 decimals, as the float prints them)."""
    whole = int(value)
    if value == whole:
        return n(whole)
    return f"{value:,.6f}".rstrip("0")  # 494,796.80000000005 as 494,796.8


def whole_pages(tokens: int, page: int) -> tuple[int, str]:
    """``tokens`` rounded down to whole pages of ``page`` tokens, and the formula's result text
    (``47,181, 47,168 in whole pages of 64``), so a printed equation is always true."""
    kept = tokens // page * page
    text = n(tokens) if kept == tokens else f"{n(tokens)}, {n(kept)} in whole pages of {n(page)}"
    return kept, text


def page_size(profile: CacheProfile, options: StrategyOptions) -> int:
    """The page size SGLang runs: the option's, but DeepSeek's sparse attention's own
    (NSA_PAGE_SIZE) whatever it says (``nsa_options``)."""
    return NSA_PAGE_SIZE if profile.indexer_bytes_per_slot else options.sglang_page_size


# DeepSeek's sparse attention (NSA: V3.2's lightning indexer) runs at one page size in SGLang,
# whatever --page-size says (server_args: page_size 64 for NSA models; NSATokenToKVPool asserts
# it on CUDA). Its token count takes the bytes its pool stores a layer: in an fp8 cache 656 + 132
# = 788 (pool_configurator's _compute_cell_size, calculate_mla_kv_cache_dim: the fp8 latent's
# scales and a bfloat16 rope). Releases whose profile_max_num_token took (kv_lora_rank + rope) x
# the dtype's bytes counted 576 + 132 = 708 there, so they log about 11% more tokens than the
# pool holds; in bfloat16 both counts are the bytes stored. SGLang 0.5.23's trtllm DSA backends
# (a Blackwell GPU's default, in fp8_e4m3 there) store the raw 576 + 132 layout and size the
# pool by it (calculate_mla_kv_cache_dim, kv_cache_configurator.py 3425-3440):
# ``chunk.sglang_dsa`` takes it where options.blackwell says the GPU is one.
NSA_PAGE_SIZE = 64
NSA_FP8_NOTE = (
    "with an fp8 KV cache SGLang sizes its pool by the bytes it stores, 656 + 132 B a token a "
    "layer (calculate_mla_kv_cache_dim: the fp8 latent's scales and a bfloat16 rope), as these "
    "figures do (releases that counted 576 + 132, profile_max_num_token's cell size before its "
    "pool configurator, log a max_total_num_tokens about 11% above what the bytes fit); on a "
    "Blackwell GPU (a B200) its trtllm DSA backends store the raw 576 + 132 B instead, and "
    "these figures take those there")


def nsa_options(profile: CacheProfile, options: StrategyOptions,
                 formulas: list[str]) -> StrategyOptions:
    """``options`` as SGLang runs DeepSeek's sparse attention (NSA): at its own page size,
    whatever --page-size says (a formula line says so, and that its fp8 cache is assumed)."""
    if not profile.indexer_bytes_per_slot:
        return options
    if (page := page_size(profile, options)) != options.sglang_page_size:
        formulas.append(f"page size {page}, not {options.sglang_page_size}: SGLang "
                        "serves DeepSeek's sparse attention (NSA) at it, whatever "
                        "--page-size says")
        options = replace(options, sglang_page_size=page)
    # fp8, or unknown; on a Blackwell GPU SGLang's trtllm layout instead (``sglang_dsa``)
    if not options.blackwell and (
            profile.kv_dtype is None or dtype_bytes(profile.kv_dtype) == 1):
        formulas.append(NSA_FP8_NOTE)
    return options
