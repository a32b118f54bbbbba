"""The codegen cache: each operator group's generated files by content key (store.py), their
on-disk entry format (entry.py) and the SQLite index of sizes, hits and builds (index.py)."""
from .store import DEFAULT_MAX_BYTES, CodegenCache, default_codegen_dir

__all__ = ["CodegenCache", "DEFAULT_MAX_BYTES", "default_codegen_dir"]
