"""A centre's own accounting into SWF: Slurm's sacct and PBS / Torque logs (`torus-sim convert`).

The real inputs are XDMoD's test lines from the University at Buffalo's CCR (Slurm and PBS / Torque /
PBS Pro), committed under examples/accounting/ with their source and licence; the hand-written lines
below pin what those files lack (steps, heterogeneous jobs, --parsable, a header in another order).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torus_sim.core.errors import AccountingFormatError, ConfigurationError
from torus_sim.inputs.workload.swf import read_swf
from torus_sim.interfaces.cli import main
from torus_sim.outputs.formats.accounting import convert, read_accounting

SAMPLES = Path(__file__).resolve().parents[1] / "examples" / "accounting"
XDMOD_FIELDS = (
    "jobid,jobidraw,cluster,partition,qos,account,group,gid,user,uid,submit,eligible,start,end,elapsed,exitcode,"
    "state,nnodes,ncpus,reqcpus,reqmem,reqtres,alloctres,timelimit,nodelist,jobname"
).split(",")
"""XDMoD's Slurm shredder reads sacct --noheader with this --format (its classes/OpenXdmod/Shredder/Slurm.php)."""


def swf_rows(path: Path) -> list[dict]:
    """Each SWF line as a dict of its 18 named fields."""
    trace = read_swf(path)
    return [record._asdict() for record in trace.records]


def test_xdmod_slurm_jobs_become_swf_lines_with_their_times_sizes_memory_and_status(tmp_path):
    conversion, written = convert(SAMPLES / "xdmod-slurm-accounting-logs.sacct", tmp_path / "ub.swf", fields=XDMOD_FIELDS)
    rows = swf_rows(written["swf"])
    assert [row["job_id"] for row in rows] == [1, 2, 3, 4]
    first = rows[0]  # 4103947: submitted 2015-06-26T13:57:00, started 06-28T02:55:50, ended 07-01T02:55:50, TIMEOUT
    assert first["submit_time"] == 0 and first["wait_time"] == 86400 + 12 * 3600 + 58 * 60 + 50
    assert first["run_time"] == 3 * 86400 and first["requested_time"] == 3 * 86400
    assert first["allocated_processors"] == first["requested_processors"] == 256
    assert first["requested_memory"] == 3000 * 1024  # ReqMem 3000Mc: 3,000 MB per CPU, in KB per processor
    assert first["status"] == 0  # killed at its time limit
    second = rows[1]  # 4107166: CANCELLED by 102216 while running; ReqMem 48000Mn on 3 nodes of 36 CPUs
    assert second["status"] == 5 and second["requested_memory"] == 48000 * 3 * 1024 / 36
    assert rows[2]["status"] == 1 and rows[2]["requested_time"] == 14 * 3600 + 20 * 60
    assert [row["user_id"] for row in rows] == [1, 2, 3, 4] and [row["partition"] for row in rows] == [1, 1, 1, -1]
    header = read_swf(written["swf"]).header
    assert header["UnixStartTime"] == "1435327020" and header["Computer"] == "ub-hpc"
    assert header["Partitions"] == "1 general-compute"
    resources = written["resources"].read_text().splitlines()
    assert resources[0].startswith("job_id,source_id,state,nodes,processors,gpus,")
    assert resources[1].startswith("1,4103947,TIMEOUT,32,256,,")
    assert resources[4].startswith("4,5692623,COMPLETED,,,2,")  # gres/gpu=2 in its AllocTRES
    assert "written: 4 jobs" in written["report"].read_text()


def test_array_records_of_several_tasks_become_one_job_per_task_each_task_once(tmp_path):
    conversion, _ = convert(
        SAMPLES / "xdmod-slurm-accounting-logs-with-job-arrays.sacct", tmp_path / "a.swf", fields=XDMOD_FIELDS
    )
    tasks = sorted(int(job.source_id.split("_")[1]) for job in conversion.jobs)
    assert tasks == [1, 2, 3, 5, 9, 10, 11, 13, 16, 17, 18, 19, 20, 91, 100, 101, 102]
    dropped = conversion.report.dropped["earlier records of the same job (requeued, or an array task listed twice)"]
    assert len(dropped) == 6  # 100, 1, and 9, 10, 11, 20 listed twice


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("non-ended-job-state", "not finished when sacct ran (RUNNING)"),
        ("unknown-job-state", "in a state Slurm does not have (FOO)"),
    ],
)
def test_records_that_are_no_finished_job_are_dropped_and_said(tmp_path, name, reason):
    conversion = read_accounting(SAMPLES / f"xdmod-slurm-{name}.sacct", fields=XDMOD_FIELDS)
    assert conversion.jobs == [] and conversion.report.dropped[reason] == [1]
    with pytest.raises(ConfigurationError, match="no job to write"):
        convert(SAMPLES / f"xdmod-slurm-{name}.sacct", tmp_path / "none.swf", fields=XDMOD_FIELDS)
    assert list(tmp_path.iterdir()) == []


HEADER_FILE = """\
User|JobName|State|JobID|Submit|Start|End|NCPUS|NNodes|ReqTRES|AllocTRES|TimelimitRaw|Partition|QOS|MaxRSS|Group|
alice|sim|COMPLETED|100|2024-03-01T10:00:00|2024-03-01T10:05:00|2024-03-01T11:05:00|64|2|cpu=64,mem=128G,node=2|cpu=64,gres/gpu:a100=4,node=2|120|gpu|normal||lab|
|batch|COMPLETED|100.batch|2024-03-01T10:05:00|2024-03-01T10:05:00|2024-03-01T11:05:00|32|1||||||2048K||
|0|COMPLETED|100.0|2024-03-01T10:05:00|2024-03-01T10:05:01|2024-03-01T11:05:00|64|2||||||8G||
bob|het|COMPLETED|200+0|2024-03-01T10:01:00|2024-03-01T10:10:00|2024-03-01T10:20:00|8|1|cpu=8,mem=8G,node=1|cpu=8,node=1|60|cpu|low||lab|
bob|het|COMPLETED|200+1|2024-03-01T10:01:00|2024-03-01T10:10:00|2024-03-01T10:20:00|4|1|cpu=4,mem=4G,node=1|cpu=4,node=1|60|cpu|low||lab|
alice|gone|CANCELLED by 1000|300|2024-03-01T10:02:00|None|2024-03-01T10:30:00|0|1|cpu=16,mem=16G,node=1||30|cpu|normal||lab|
alice|sim|FAILED|400|2024-03-01T10:03:00|2024-03-01T10:04:00|2024-03-01T10:04:30|16|1|cpu=16,node=1|cpu=16,node=1|UNLIMITED|cpu|normal||lab|
|batch|COMPLETED|999.batch|2024-03-01T10:05:00|2024-03-01T10:05:00|2024-03-01T11:05:00|32|1||||||1K||
"""


def test_a_header_in_any_order_steps_heterogeneous_jobs_and_a_time_zone(tmp_path):
    path = tmp_path / "mine.sacct"
    path.write_text(HEADER_FILE)  # --parsable: every line ends with '|'
    conversion = read_accounting(path, timezone="Europe/Paris")
    by_id = {job.source_id: job for job in conversion.jobs}
    assert sorted(by_id) == ["100", "200", "300", "400"]
    job = by_id["100"]
    assert job.submit == 1709283600.0  # 10:00 in Paris (UTC+1 in March) is 09:00 UTC
    assert (job.processors, job.nodes, job.gpus) == (64, 2, 4)  # typed gres/gpu:a100
    assert job.requested_memory_kib == 128 * 1024**2 and job.used_memory_kib == 8 * 1024**2  # the steps' largest MaxRSS
    assert job.requested_time == 120 * 60 and (job.user, job.partition, job.queue) == ("alice", "gpu", "normal")
    het = by_id["200"]
    assert (het.processors, het.nodes, het.requested_memory_kib) == (12, 2, 12 * 1024**2)
    cancelled = by_id["300"]
    assert cancelled.status == 5 and not cancelled.started and cancelled.requested_processors == 16
    assert by_id["400"].requested_time is None and by_id["400"].status == 0
    assert conversion.report.dropped == {"steps whose job is not in the file": [9]}
    assert conversion.report.records == {"header line": 1, "job record": 5, "step record": 3}
    assert conversion.numbers["user"] == {"alice": 1, "bob": 2}


def test_a_job_that_never_started_is_written_as_the_archive_does_and_a_replay_skips_it(tmp_path):
    path = tmp_path / "mine.sacct"
    path.write_text(HEADER_FILE)
    _, written = convert(path, tmp_path / "mine.swf", max_procs=128)
    rows = {row["job_id"]: row for row in swf_rows(written["swf"])}
    never = next(row for row in rows.values() if row["status"] == 5)
    assert (never["wait_time"], never["run_time"], never["allocated_processors"]) == (-1, -1, -1)
    assert never["requested_processors"] == 16
    assert read_swf(written["swf"]).header["MaxProcs"] == "128"


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("JobID|Submit|Start|End|State\n1|2024-01-01T00:00:00|x|2024-01-01T01:00:00|COMPLETED\n", 2, "Start 'x' is not a time"),
        ("JobID|Submit|Start|End|State\n1|2024-01-01T00:00:00|2024-01-01T00:00:00|COMPLETED\n", 2, "4 fields where"),
        ("JobID|Submit|Start|State\n", 1, "lack end"),
        ("JobID|Submit|Start|End|State\nabc|2024-01-01T00:00:00||x|COMPLETED\n", 2, "not a Slurm job id"),
    ],
)
def test_a_malformed_sacct_line_names_file_and_line_and_nothing_is_written(tmp_path, capsys, text, line, says):
    path = tmp_path / "bad.sacct"
    path.write_text(text)
    with pytest.raises(AccountingFormatError, match=f"bad.sacct:{line}: malformed accounting line: .*{says}"):
        read_accounting(path)
    assert main(["convert", str(path), "--out", str(tmp_path / "out.swf")]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert sorted(item.name for item in tmp_path.iterdir()) == ["bad.sacct"]


def test_xdmod_pbs_torque_and_pbs_pro_records(tmp_path):
    conversion, written = convert(SAMPLES / "xdmod-pbs-accounting-logs.log", tmp_path / "pbs.swf")
    jobs = {job.source_id: job for job in conversion.jobs}
    assert len(jobs) == 9
    torque = jobs["6464684.anonhost"]  # Resource_List.nodes=1:ppn=4:avx, resources_used.mem=167864kb, Exit_status=1
    assert torque.status == 0 and torque.queue == "default" and torque.used_memory_kib == 167864
    assert torque.requested_time == 24 * 3600 and torque.requested_memory_kib == 1993 * 1024
    assert jobs["2994.pbs"].processors == 65  # PBS Pro: Resource_List.ncpus=65 (select=5:ncpus=13)
    assert jobs["7904"].gpus == 1  # Torque: nodes=1:ppn=28:gpus=1
    killed = jobs["3073070.[hostname_1]"]
    assert killed.status == 0 and killed.gpus == 4 and killed.processors == 48  # Exit_status=271: SIGTERM
    assert conversion.report.notes["killed by a signal (Torque's Exit_status 256 + N: its time limit or qdel)"] == [9]
    rows = swf_rows(written["swf"])
    assert [row["status"] for row in rows].count(1) == 6
    assert rows[0]["wait_time"] == 1261425023 - 1261424924 and rows[0]["run_time"] == 2197


def test_pbs_deleted_jobs_reruns_and_malformed_lines(tmp_path):
    path = tmp_path / "20240301"
    path.write_text(
        "03/01/2024 10:00:00;Q;11.srv;queue=short\n"
        "03/01/2024 10:05:00;D;11.srv;requestor=alice@login\n"
        "03/01/2024 10:06:00;D;12.srv;requestor=alice@login\n"
        "03/01/2024 10:07:00;S;13.srv;user=bob queue=long start=1709287620\n"
        "03/01/2024 11:00:00;E;13.srv;user=bob group=g queue=long qtime=1709287000 start=1709287620 end=1709290000 "
        "Resource_List.select=2:ncpus=8:mem=4gb+1:ncpus=4:mem=2gb exec_host=n1/0*8+n2/0*8+n3/0*4 Exit_status=-3\n"
        "03/01/2024 12:00:00;E;13.srv;user=bob group=g queue=long qtime=1709287000 start=1709291000 end=1709293600 "
        "Resource_List.select=2:ncpus=8:mem=4gb+1:ncpus=4:mem=2gb exec_host=n1/0*8+n2/0*8+n3/0*4 Exit_status=0\n"
    )
    conversion = read_accounting(path)
    jobs = {job.source_id: job for job in conversion.jobs}
    assert jobs["11.srv"].status == 5 and not jobs["11.srv"].started and jobs["11.srv"].submit == 1709287200
    rerun = jobs["13.srv"]
    assert rerun.start == 1709291000 and rerun.processors == 20 and rerun.nodes == 3
    assert rerun.requested_memory_kib == (2 * 4 + 2) * 1024**2
    assert conversion.report.dropped == {
        "deleted or aborted jobs without a Q record (no submit time)": [3],
        "earlier E records of the same job (rerun)": [5],
    }
    path.write_text("03/01/2024 10:00:00;E;1;user=a\nnot a record\n")
    with pytest.raises(AccountingFormatError, match="20240301:2: malformed accounting line: not a PBS accounting record"):
        read_accounting(path)


def test_the_format_is_told_from_the_first_line_or_named(tmp_path, capsys):
    path = tmp_path / "what.txt"
    path.write_text("hello world\n")
    assert main(["convert", str(path), "--out", str(tmp_path / "o.swf")]) == 2
    assert "name it with --from sacct or --from pbs" in capsys.readouterr().err
    assert (
        main(
            [
                "convert",
                str(SAMPLES / "xdmod-pbs-accounting-logs.log"),
                "--from",
                "pbs",
                "--fields",
                "JobID",
                "--out",
                str(tmp_path / "o.swf"),
            ]
        )
        == 2
    )
    assert "--fields names sacct's columns" in capsys.readouterr().err
    assert (
        main(
            [
                "convert",
                str(SAMPLES / "xdmod-pbs-accounting-logs.log"),
                "--timezone",
                "Mars/Olympus",
                "--out",
                str(tmp_path / "o.swf"),
            ]
        )
        == 2
    )
    assert "unknown time zone 'Mars/Olympus'" in capsys.readouterr().err


def test_a_converted_log_replays_against_its_own_schedule(tmp_path, capsys):
    swf = tmp_path / "ub.swf"
    assert main(["convert", str(SAMPLES / "xdmod-pbs-accounting-logs.log"), "--out", str(swf), "--max-procs", "128"]) == 0
    printed = capsys.readouterr().out
    assert "written: 9 jobs" in printed and "report: " in printed
    out = tmp_path / "run"
    code = main(
        [
            "run",
            "--platform",
            "cluster",
            "--workload",
            str(swf),
            "--failures",
            "none",
            "--policy",
            "FCFS-EASY",
            "--against-log",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    against = json.loads((out / "against_log.json").read_text())
    assert against["summary"]["jobs"]["compared"] == 9
