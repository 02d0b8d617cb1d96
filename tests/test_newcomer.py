"""The first hour with PCP: the README's commands run in the order shown in a fresh folder; every
subcommand ends in a clear message, never a traceback, with its optional dependencies (Ray,
matplotlib, rich) absent; every option's help shows its default; runs get folders of their own."""
import os
import re
import subprocess
import sys

import pytest

import pcp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUS = [d for d in pcp.devices() if d != "cpu"]
FAST = {"train": ["--max-iters", "10", "--eval-interval", "5", "--eval-iters", "2", "--sample-tokens", "20",
                  "--no-dashboard"],
        "diloco": ["--inner-steps", "3", "--eval-iters", "2", "--workers", "2", "--no-dashboard"]}


def pcp_cli(args, cwd, block=(), timeout=300):
    """`pcp ARGS` in a fresh interpreter in cwd, with the modules in `block` made unimportable."""
    code = (f"import sys; [sys.modules.__setitem__(m, None) for m in {list(block)!r}]; "
            f"from pcp.cli import main; sys.exit(main({list(args)!r}))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def readme_commands():
    """The `pcp ...` lines of the README's shell blocks, in order (`... && pcp ...` included)."""
    text = open(os.path.join(ROOT, "README.md")).read()
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("pcp "):
                    commands.append(part.split()[1:])
    return commands


def test_the_readmes_commands_run_in_order_in_a_fresh_folder(tmp_path):
    """Each with fewer iterations (FAST's flags appended): the point is the order, where a second
    `pcp train` was refused for the first one's folder and `pcp sample` needed a path."""
    commands = readme_commands()
    assert [c[0] for c in commands][:5] == ["train", "sample", "train", "export-hf", "train"], commands
    for args in commands:
        if "--device" in args and not GPUS:
            continue
        if args[0] == "diloco":
            pytest.importorskip("ray", reason="Ray is not installed")
        run = pcp_cli(args + FAST.get(args[0], []), tmp_path)
        assert run.returncode == 0, (args, run.stdout[-2000:], run.stderr[-3000:])
        assert "Traceback" not in run.stderr, run.stderr
    runs = sorted(os.listdir(tmp_path / "runs"))
    assert len([r for r in runs if r.startswith("shakespeare-char-cpu-")]) == 1 + bool(GPUS), runs
    assert os.path.isfile(tmp_path / "hf-model" / "model.safetensors")


@pytest.mark.parametrize("args,code,says", [
    (["train", "--max-iters", "4", "--eval-interval", "2", "--eval-iters", "1", "--sample-tokens", "0",
      "--dashboard"], 0, "matplotlib not installed"),
    (["sample", "--max-new-tokens", "5"], 0, ""),
    (["export-hf", "hf"], 0, "exported to hf"),
    (["diloco", "--workers", "2"], 2, 'pcp diloco needs ray, which is not installed: pip install "pcp[distributed]"'),
    (["shepherd"], 2, 'needs ray, which is not installed: pip install "pcp[distributed]"'),
    (["worker", "--connect", "127.0.0.1:9"], 2, "127.0.0.1:9"),
    (["--version"], 0, f"pcp {pcp.__version__}"),
    (["train", "--help"], 0, "--max-iters"),
])
def test_every_subcommand_without_ray_matplotlib_or_rich_ends_in_a_message(tmp_path_factory, args, code, says):
    folder = tmp_path_factory.getbasetemp() / "no-extras"  # one folder: sample and export read train's run
    folder.mkdir(exist_ok=True)
    run = pcp_cli(args, folder, block=("ray", "matplotlib", "rich"))
    assert run.returncode == code, (run.stdout[-2000:], run.stderr[-2000:])
    assert "Traceback" not in run.stderr + run.stdout, run.stderr
    assert says in run.stdout + run.stderr, (run.stdout[-2000:], run.stderr[-2000:])
    if code:
        assert run.stderr.count("\n") == 1, run.stderr  # one line


def test_every_option_shows_its_default_and_a_help_line():
    from pcp.cli import main
    for command in ("train", "sample", "export-hf", "diloco", "shepherd", "worker"):
        run = pcp_cli([command, "--help"], ROOT)
        options = re.findall(r"^  (--[a-z-]+)(.*(?:\n {10,}.*)*)", run.stdout, re.M)
        assert options or command == "export-hf", run.stdout  # export-hf has positional paths only
        for flag, text in options:
            if flag in ("--help", "--dashboard", "--connect"):  # no default to show (--connect is required)
                continue
            assert re.search(r"\S", text) and "(default:" in " ".join(text.split()), (command, flag, text)
    with pytest.raises(SystemExit):
        main(["--version"])


def test_runs_without_out_get_fresh_folders_and_followups_find_the_latest(tmp_path):
    for _ in range(2):
        run = pcp_cli(["train"] + FAST["train"], tmp_path)
        assert run.returncode == 0, run.stderr
    first, second = sorted(os.listdir(tmp_path / "runs"))
    assert f"the run is in runs/{second}" in run.stdout
    run = pcp_cli(["train", "--resume", "--max-iters", "10", "--no-dashboard"], tmp_path)
    assert run.returncode == 0 and f"nothing left to train (the run was at max_iters 10); the run is in runs/{second}" \
        in run.stdout, run.stdout + run.stderr
    os.remove(tmp_path / "runs" / second / "best.safetensors")
    os.remove(tmp_path / "runs" / second / "ckpt.safetensors")  # the latest with a checkpoint is now the first
    run = pcp_cli(["export-hf", "hf"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert os.path.isfile(tmp_path / "hf" / "config.json")
    run = pcp_cli(["sample", "--checkpoint", str(tmp_path / "nowhere")], tmp_path)
    assert run.returncode == 2 and "no checkpoint at" in run.stderr and "Traceback" not in run.stderr


def test_a_diloco_run_folder_samples_and_exports(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed")
    run = pcp_cli(["diloco", "--rounds", "1", "--out", "d"] + FAST["diloco"], tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert re.search(r"\(steps [\d.]+ s, exchange [\d.]+ s, outer step [\d.]+ s, eval [\d.]+ s, checkpoint", run.stdout)
    for args in (["sample", "--checkpoint", "d", "--max-new-tokens", "5"], ["export-hf", "d", "hf"]):
        run = pcp_cli(args, tmp_path)
        assert run.returncode == 0, run.stderr


def test_small_messages_say_what_is_wrong(tmp_path):
    run = pcp_cli(["train", "--max-iters", "-5", "--out", "o"], tmp_path)
    assert run.returncode == 2 and run.stderr.strip().endswith("train: max_iters must be >= 0, got -5"), run.stderr
    (tmp_path / "empty.txt").write_text("")
    run = pcp_cli(["train", "--data", "empty.txt", "--out", "bad"], tmp_path)
    assert run.returncode == 2 and "text: empty.txt is empty" in run.stderr, run.stderr
    assert not os.path.exists(tmp_path / "bad")  # a refused run leaves no folder behind


@pytest.mark.skipif(not GPUS, reason="no GPU")
def test_a_software_gpu_says_so(tmp_path):
    info = pcp.gpu_info("gpu")
    software = "llvmpipe" in info["name"] or "SwiftShader" in info["name"]
    assert info["software"] == software
    assert pcp.devices()[1].endswith("software, on the CPU)") == software
    run = pcp_cli(["train", "--device", "gpu", "--max-iters", "2", "--eval-interval", "2", "--eval-iters", "1",
                   "--sample-tokens", "0", "--no-dashboard"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("is a software implementation of a GPU") == software, run.stdout
