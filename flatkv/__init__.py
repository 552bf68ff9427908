"""FlatKV Explorer: see and compare how a hybrid LLM's KV cache is laid out in paged memory.

The planner (`flatkv.plan`) is pure standard-library Python; torch is imported only under
`flatkv.gpu`. The command line is `python -m flatkv`.
"""

__version__ = "0.1.0"
