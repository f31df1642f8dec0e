"""nystrom-bench: Nystrom kernel-matrix approximation library and benchmark study."""
__version__ = "0.1.0"
