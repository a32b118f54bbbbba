"""Content addressing: what a group's files depend on and its key (inputs.py), the keys of a whole
model (memos.py), the codegen cache of generated files by key (store.py: entries; entry.py: their
on-disk format; records.py: builds and stats; maintenance.py: gc and verify; index.py: the SQLite
index), the parse cache of models (parse_cache.py), a build's use of the cache (session.py) and
its Redis tier (remote.py). Imports the model, never the generators."""
from .store import DEFAULT_MAX_BYTES, CodegenCache, codegen_dir

__all__ = ["CodegenCache", "DEFAULT_MAX_BYTES", "codegen_dir"]
