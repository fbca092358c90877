"""tpu-sweep's parts (docs/sweep.md): the spec and its points, running a
point, the local and Slurm executors, the result files, plots and
SCALE-Sim's inputs."""


class SweepError(Exception):
    """A problem with the user's input, reported as one line and exit 1."""


def one_line(error):
    return " ".join(str(error).split())


def tool_message(tool, line):
    """A tool's message, prefixed with its name unless it says it already."""
    return line if line.startswith(f"{tool}:") else f"{tool}: {line}"
