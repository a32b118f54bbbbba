"""The C++ unit tests (csrc/tests/) pass: tensors, IValues, schemas, dispatch, registration."""
import subprocess


def test_cpp_unit_tests_pass(cpp_test_binary):
    run = subprocess.run([cpp_test_binary], capture_output=True, text=True, timeout=600)
    output = run.stdout + run.stderr
    assert run.returncode == 0, f"opdispatch_tests failed:\n{output}"
    assert output.rstrip().endswith(" 0 failed"), output
