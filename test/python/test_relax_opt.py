"""relax-opt as a library: pipeline parsing, verify-diagnostics matching, exit statuses."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from relax_mlir.diagnostics import Diagnostic
from relax_mlir.errors import PassError
from relax_mlir.pipelines import PASSES, load_passes
from relax_mlir.pipelines.registry import parse_options, parse_pipeline
from relax_mlir.relax_opt import check_expected, main, split_chunks

GOOD = """func.func @f(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n"], f32>
}
"""


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args)
    return status, out.getvalue(), err.getvalue()


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "in.mlir"
    path.write_text(text)
    return str(path)


def test_parse_pipeline() -> None:
    elements = parse_pipeline(
        "builtin.module(relax-verify, canonicalize{max-iterations=3}, func.func(cse, canonicalize))"
    )
    assert [e.name for e in elements] == ["relax-verify", "canonicalize", "func.func"]
    assert elements[1].options == "max-iterations=3"
    assert [e.name for e in elements[2].nested] == ["cse", "canonicalize"]
    assert elements[2].text() == "func.func(cse,canonicalize)"
    assert [e.name for e in parse_pipeline("relax-verify,cse")] == ["relax-verify", "cse"]


@pytest.mark.parametrize("text", ["builtin.module(", "a{b", "a,,b", "(x)", "a)b"])
def test_parse_pipeline_errors(text: str) -> None:
    with pytest.raises(PassError, match="invalid pass pipeline"):
        parse_pipeline(text)


def test_parse_options() -> None:
    assert parse_options("p", "a=1 b=x") == {"a": "1", "b": "x"}
    with pytest.raises(PassError, match="name=value"):
        parse_options("p", "a")


def test_registry_has_verify() -> None:
    load_passes()
    assert "relax-verify" in PASSES
    assert PASSES["relax-verify"].summary


def test_good_file(tmp_path: Path) -> None:
    status, out, err = run([write(tmp_path, GOOD), "--relax-verify"])
    assert status == 0, err
    assert '"relax.exp"' in out and not err


def test_ill_typed_file_reports_location(tmp_path: Path) -> None:
    bad = GOOD.replace('-> !relax.tensor<["n"], f32>', "-> !relax.tensor<[3], f32>").replace(
        ': !relax.tensor<["n"], f32>\n}', ": !relax.tensor<[3], f32>\n}"
    )
    path = write(tmp_path, bad)
    status, out, err = run([path, "--relax-verify"])
    assert status == 1 and out == ""
    assert f"{path}:2:8: error: 'relax.exp' op result #0 is declared" in err
    assert "Traceback" not in err


def test_output_file(tmp_path: Path) -> None:
    target = tmp_path / "out.mlir"
    status, out, _ = run([write(tmp_path, GOOD), "-o", str(target)])
    assert status == 0 and out == ""
    assert '"relax.exp"' in target.read_text()


def test_split_chunks_keep_line_numbers() -> None:
    chunks = split_chunks("a\nb\n// -----\nc\n", split=True)
    assert len(chunks) == 2
    assert chunks[1].split("\n")[3] == "c"


def test_check_expected_matches_and_misses() -> None:
    chunk = "x\n// expected-error@above {{boom}}\n// expected-warning@+1 {{careful}}\ny\n"
    ok = [Diagnostic("error", "f", 1, 1, "big boom here"), Diagnostic("warning", "f", 4, 2, "be careful")]
    assert check_expected(chunk, ok) == []
    wrong_line = [Diagnostic("error", "f", 2, 1, "boom"), ok[1]]
    problems = check_expected(chunk, wrong_line)
    assert any("unexpected error: boom" in p for p in problems)
    assert any('expected error "boom" was not produced' in p for p in problems)


def test_verify_diagnostics_fails_on_mismatch(tmp_path: Path) -> None:
    text = GOOD.replace('-> !relax.tensor<["n"], f32>\n  return', "-> !relax.tensor<[3], f32>\n  return")
    text = text.replace("  %0 =", "  // expected-error@below {{a message that is not produced}}\n  %0 =")
    status, _, err = run([write(tmp_path, text), "--relax-verify", "--verify-diagnostics"])
    assert status == 1
    assert "was not produced" in err and "unexpected error" in err


def test_unknown_pass_lists_close_names(tmp_path: Path) -> None:
    status, _, err = run([write(tmp_path, GOOD), "--pass-pipeline=builtin.module(relax-verif)"])
    assert status == 1
    assert "unknown pass or pipeline 'relax-verif'; did you mean 'relax-verify'" in err


def test_pipeline_and_flags_conflict(tmp_path: Path) -> None:
    status, _, err = run([write(tmp_path, GOOD), "--pass-pipeline=builtin.module(cse)", "--canonicalize"])
    assert status == 1 and "not both" in err
