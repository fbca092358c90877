#!/usr/bin/python3
"""The trace and the report of one model tell the same story (docs/simulator.md#traces).

    profile-truth.py TPUC TPUSIM MODEL_DIR CONFIG OUT_DIR

Compiles MODEL_DIR/model.onnx for CONFIG, runs it on MODEL_DIR/test_data_set_0
in fast and cycle mode with --trace and --report, and checks, in each mode:

* every pc of the program is one instruction slice, on its unit's track;
* each unit's state slices (busy, stall: REASON) add up to the report's busy
  and stalled cycles, and idle is the rest of total_cycles;
* independently of the state slices, from the instructions' own start and
  end cycles: the controller is busy one cycle per instruction; the vector
  unit while a vector instruction runs; the matrix unit while an mxu.mm is in
  the array, and busy or stalled on weights while an mxu.mm or mxu.ldw is; a
  DMA engine busy or stalled on DRAM while a transfer runs; the run ends with
  its last instruction;

and that both modes draw the same states.
"""
import collections
import json
import os
import subprocess
import sys

REASONS = ("token", "dram", "bank", "weights", "fence", "queue_full")


def fail(message):
    sys.exit(f"profile-truth: {message}")


def union(spans):
    """Cycles covered by half-open [start, end) spans."""
    covered, reach = 0, 0
    for start, end in sorted(spans):
        start = max(start, reach)
        if end > start:
            covered += end - start
            reach = end
    return covered


def check(trace, report, where):
    total = report["total_cycles"]
    program_size = report["instructions"]
    ghz = report["clock_ghz"]
    tracks = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
              if e["ph"] == "M" and e["name"] == "thread_name"}
    instructions = collections.defaultdict(list)  # track -> [(opcode, start, end)]
    states = collections.defaultdict(collections.Counter)  # unit -> state -> cycles
    state_spans = collections.defaultdict(list)
    pcs = collections.Counter()
    for event in trace["traceEvents"]:
        if event["ph"] != "X":
            continue
        track, args = tracks[event["tid"]], event["args"]
        start, end = args["start_cycle"], args["end_cycle"]
        # The drawn times are the cycles at the config's clock.
        if abs(event["ts"] - start * 1e-3 / ghz) > 1e-6:
            fail(f"{where}: {track} slice {event['name']} at ts {event['ts']}, cycle {start}")
        if event["cat"] == "instruction":
            pcs[args["pc"]] += 1
            instructions[track].append((args["asm"].split()[0], start, end))
        else:
            if abs(event["dur"] - (end - start) * 1e-3 / ghz) > 1e-6:
                fail(f"{where}: {track} slice {event['name']} lasts {event['dur']} us")
            unit = track.removesuffix(" state")
            states[unit][event["name"]] += end - start
            state_spans[unit].append((start, end))
    missing = [pc for pc in range(program_size) if pcs[pc] != 1]
    if missing or len(pcs) != program_size:
        fail(f"{where}: pcs not drawn exactly once: {missing[:10]} "
             f"({len(missing)} of {program_size})")

    for unit, figures in report["units"].items():
        drawn = states[unit]
        expected = collections.Counter({"busy": figures["busy"]})
        expected.update({f"stall: {r}": figures["stalled"][r] for r in REASONS})
        if +drawn != +expected:
            fail(f"{where}: {unit}: the trace's states {dict(+drawn)} differ from the "
                 f"report's {dict(+expected)}")
        if union(state_spans[unit]) != sum(drawn.values()):
            fail(f"{where}: {unit}: state slices overlap")
        if figures["busy"] + sum(figures["stalled"].values()) + figures["idle"] != total:
            fail(f"{where}: {unit}: busy, stalls and idle do not add up to {total}")
        drawn_instructions = sum(len(instructions[t]) for t in (unit, unit + "_weights"))
        if drawn_instructions != figures["instructions"]:
            fail(f"{where}: {unit}: {drawn_instructions} instruction slices, the report "
                 f"counts {figures['instructions']}")

    def spans(track, opcodes=None):
        return [(s, e) for op, s, e in instructions[track] if opcodes is None or op in opcodes]

    units = report["units"]
    expectations = [
        ("controller busy", units["controller"]["busy"], program_size),
        ("vector busy", units["vector"]["busy"], union(spans("vector"))),
        ("matrix busy", units["matrix"]["busy"], union(spans("matrix", {"mxu.mm"}))),
        ("matrix busy + weights", units["matrix"]["busy"] + units["matrix"]["stalled"]["weights"],
         union(spans("matrix", {"mxu.mm"}) + spans("matrix_weights"))),
        ("total_cycles", total, max(e for track in instructions.values() for _, _, e in track)),
    ]
    for engine in ("dma_load", "dma_store"):
        transfers = spans(engine, {"dma.ld", "dma.st", "dma.gather"})
        expectations.append((f"{engine} busy + dram",
                             units[engine]["busy"] + units[engine]["stalled"]["dram"],
                             union(transfers)))
    for what, got, want in expectations:
        if got != want:
            fail(f"{where}: {what} is {got} in the report, {want} from the instructions")
    return {unit: sorted(spans_) for unit, spans_ in state_spans.items()}, states


def main():
    tpuc, tpusim, model_dir, config, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    bundle = os.path.join(out, "model.tpub")
    subprocess.run([tpuc, os.path.join(model_dir, "model.onnx"), "-o", bundle,
                    "--config", config], check=True)
    drawn = {}
    for mode in ("fast", "cycle"):
        trace_file = os.path.join(out, f"trace-{mode}.json")
        report_file = os.path.join(out, f"report-{mode}.json")
        subprocess.run([tpusim, bundle, "--mode", mode, "--data",
                        os.path.join(model_dir, "test_data_set_0"), "--trace", trace_file,
                        "--report", report_file], check=True, stdout=subprocess.DEVNULL)
        with open(trace_file) as f:
            trace = json.load(f)
        with open(report_file) as f:
            report = json.load(f)
        drawn[mode] = check(trace, report, f"{os.path.basename(model_dir)} ({mode} mode)")
    if drawn["fast"] != drawn["cycle"]:
        fail(f"{os.path.basename(model_dir)}: fast and cycle mode draw different states")
    print(f"{os.path.basename(model_dir)}: trace and report agree in both modes")


if __name__ == "__main__":
    main()
