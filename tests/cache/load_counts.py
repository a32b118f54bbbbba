"""What one load of the autograd model did, counted by patching its steps: the derivatives
entries read (their lines), the functions decided and the groups fingerprinted (the cache tests
of per-entry reuse and of the carry across operator-yaml edits share it)."""
from opgen.gen.layers import autograd_kernels, autograd_plan
from opgen.model import derivatives as derivatives_module


class Counts:
    """What one load did: entries read (their lines), functions decided, groups fingerprinted."""

    def __init__(self, monkeypatch):
        self.read, self.decided, self.fingerprinted = [], [], []
        counts = self
        real_entry, real_decide, real_fingerprint = (derivatives_module._Reader.entry, autograd_plan.decide,
                                                     autograd_kernels.AutogradModel._fingerprint)

        def entry(reader, raw, seen):
            counts.read.append(raw.line)
            return real_entry(reader, raw, seen)

        def decide(f, *args):
            counts.decided.append(f.key)
            return real_decide(f, *args)

        def fingerprint(autograd, group):
            counts.fingerprinted.append(group.name)
            return real_fingerprint(autograd, group)
        monkeypatch.setattr(derivatives_module._Reader, "entry", entry)
        monkeypatch.setattr(autograd_plan, "decide", decide)
        monkeypatch.setattr(autograd_kernels.AutogradModel, "_fingerprint", fingerprint)
