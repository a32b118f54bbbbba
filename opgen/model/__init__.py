"""opgen's operator model: schemas, native functions, backend indices and groupings."""
from .backend import BackendIndex, BackendMetadata
from .backend_yaml import BackendYaml, backend_summary, parse_backend_yaml
from .dispatch_keys import DispatchKey
from .grouping import OperatorGroup, VariantGroup, ViewGroup
from .loader import Model, default_tags_path, load_model
from .native_function import NativeFunction
from .schema import FunctionSchema, OperatorName, SchemaKind

__all__ = [
    "BackendIndex", "BackendMetadata", "BackendYaml", "DispatchKey", "FunctionSchema", "Model", "NativeFunction",
    "OperatorGroup", "OperatorName", "SchemaKind", "VariantGroup", "ViewGroup", "backend_summary",
    "default_tags_path", "load_model", "parse_backend_yaml",
]
