"""opgen: incremental, cached, reproducible operator code generation."""
