"""Every case of docs/reliability.md (scripts/reliability_cases.py), through `jaxgames`'s main:
its exit status and message, one line without a traceback, and nothing on disk changed."""

from __future__ import annotations

import pathlib
import re
import shutil

import pytest

from tests.helpers import REPO, script_module

cases = script_module("scripts/reliability_cases.py")

# one worker runs this module, so that its trained run is trained once
pytestmark = pytest.mark.xdist_group("cli")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return cases.train_base(tmp_path_factory.mktemp("reliability"))


@pytest.mark.parametrize("case", cases.CASES, ids=lambda c: f"{c.group[:12]}-{c.what[:40]}")
def test_a_bad_input_gives_its_one_line_and_changes_nothing(case, base, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(base, run)
    if case.setup:
        case.setup(run, tmp_path)
    before = cases.digest(run)
    try:
        code, text = cases.run_case(case, run, tmp_path, subprocess_=False)
    finally:
        for handle in cases._HELD:
            handle.close()
        cases._HELD.clear()
    assert "Traceback" not in text, text
    assert code == case.code, text
    assert re.search(case.match, cases.message(text)), cases.message(text)
    if case.code == 2 and "helptext" not in text:  # our own messages: one line (tyro: a box)
        assert len(cases.said(text)) == 1, text
    if case.unchanged or case.code == 2:
        after = cases.digest(run)
        assert after == before, "a failing command changed the run's files"
    if case.no_folder:  # refused before it began: no run folder
        target = case.argv[case.argv.index("--run-dir") + 1].format(dir=tmp_path)
        assert not pathlib.Path(target).exists(), target


def test_the_catch_all_prints_one_line_for_a_bug_and_the_traceback_on_request(monkeypatch, capsys):
    from jaxgames import cli

    def broken(argv):
        raise TypeError("something is not callable")

    monkeypatch.setitem(cli.COMMANDS, "inspect", broken)
    assert cli.main(["inspect", "x"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: TypeError: something is not callable" in err
    assert "bug in jaxgames" in err and "JAXGAMES_DEBUG=1" in err
    with pytest.raises(TypeError):
        cli.main(["--debug", "inspect", "x"])


def test_reliability_doc_lists_every_case():
    doc = (REPO / "docs" / "reliability.md").read_text()
    missing = [c.what for c in cases.CASES if f"| {c.what} |" not in doc]
    assert not missing, f"regenerate docs/reliability.md: {missing}"
