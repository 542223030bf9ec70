import lzma

import numpy as np
import pytest

from failure_logs.bgl_ras import MidplaneMapping, read_bgl_ras
from failure_logs.events import FailureLog
from failure_logs.lanl import read_lanl
from failure_logs.sources import BUNDLED_BGL_RAS, load_failure_source
from failure_logs.synthetic import SyntheticFailures, generate_failures, scale_failure_count
from failure_logs.transform import fit_to_span, shift
from torus_sim.core.errors import ConfigurationError, FailureLogFormatError
from torus_sim.machine.topology import BGL_SUPERNODE_TORUS

from .conftest import SHARED_DATA

# Real lines of Loghub's BGL_2k.log.
RAS_FATAL = "KERNDTLB 1118536327 2005.06.11 R30-M0-N9-C:J16-U01 2005-06-11-17.32.07.581048 R30-M0-N9-C:J16-U01 RAS KERNEL FATAL data TLB error interrupt\n"
RAS_INFO = "- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02-M1-N0-C:J12-U11 RAS KERNEL INFO instruction cache parity error corrected\n"
RAS_NULL = "- 1118680929 2005.06.13 NULL 2005-06-13-09.42.09.154331 NULL RAS MMCS FATAL idoproxydb hit ASSERT condition\n"
LANL_HEADER = "System,machine type,nodes,procstot,procsinnode,nodenum,nodenumz,node install,node prod,node decom,fru type,mem,cputype,memtype,num intercon,purpose,Prob Started,Prob Fixed,Down Time,Facilities,Hardware,Human Error,Network,Undetermined,Software,Same Event\n"
LANL_ROW = "20,smp,512,2048,4,{node},{node},current,current,current,part,8,1,1,0,compute,6/21/2003 10:54,6/21/2003 11:00,6,,Memory Dimm,,,,,No\n"


def test_default_midplane_mapping_is_a_bijection_onto_the_128_supernodes():
    mapping = MidplaneMapping.default()
    assert len(mapping.supernode_of) == 128
    assert sorted(mapping.supernode_of.values()) == list(range(128))
    assert mapping.midplane_of("R30-M0-N9-C:J16-U01") == "R30-M0"
    assert mapping.midplane_of("UNKNOWN_LOCATION") is None
    assert mapping.supernode_of["R30-M0"] == BGL_SUPERNODE_TORUS.index((1, 0, 4))


def test_fatal_ras_lines_become_failures_and_unknown_locations_are_counted(tmp_path):
    path = tmp_path / "ras.log"
    path.write_text(RAS_INFO + RAS_FATAL + RAS_NULL)
    log = read_bgl_ras(path)
    assert log.failed_at.tolist() == [1118536327.0]
    assert log.supernodes.tolist() == [MidplaneMapping.default().supernode_of["R30-M0"]]
    assert np.isnan(log.repair_at).all()
    assert log.counts == {"lines": 3, "not_failure_level": 1, "unknown_location": 1}


def test_bundled_ras_sample_has_347_fatal_lines_on_95_midplanes():
    log = read_bgl_ras(BUNDLED_BGL_RAS)
    assert len(log) == 347
    assert len(set(log.supernodes.tolist())) == 95
    assert log.sha256 == "2a819ea540909db682005c9cf948387a40729b5c2e9f19d430e29ce704825496"


def test_a_broken_ras_line_names_the_file_and_line(tmp_path):
    path = tmp_path / "ras.log"
    path.write_text(RAS_FATAL + "- notanumber 2005.06.11 R30-M0 x y RAS KERNEL FATAL boom\n")
    with pytest.raises(FailureLogFormatError, match=r"ras\.log:2: .*EpochSec"):
        read_bgl_ras(path)
    path.write_text("short line\n")
    with pytest.raises(FailureLogFormatError, match=r":1: .*at least 9 fields"):
        read_bgl_ras(path)


def test_midplane_mapping_is_replaceable_from_a_csv(tmp_path):
    table = tmp_path / "map.csv"
    table.write_text("midplane,supernode\nR30-M0,5\n")
    log_path = tmp_path / "ras.log"
    log_path.write_text(RAS_FATAL + RAS_FATAL.replace("R30-M0", "R31-M1"))
    log = read_bgl_ras(log_path, MidplaneMapping.from_csv(table))
    assert log.supernodes.tolist() == [5]
    assert log.counts["unmapped_midplane"] == 1
    table.write_text("midplane,supernode\nR30-M0,five\n")
    with pytest.raises(FailureLogFormatError, match=r"map\.csv:2"):
        MidplaneMapping.from_csv(table)


def test_lanl_rows_give_failures_with_real_repair_times(tmp_path):
    path = tmp_path / "lanl.csv"
    path.write_text(
        LANL_HEADER + LANL_ROW.format(node=0) + LANL_ROW.format(node=511) + LANL_ROW.format(node=3).replace("20,", "19,", 1)
    )
    log = read_lanl(path, system=20, n_supernodes=128)
    assert log.supernodes.tolist() == [0, 127]
    assert log.downtime.tolist() == [360.0, 360.0]
    assert log.failed_at[0] == pytest.approx(1056192840.0)  # 2003-06-21 10:54 taken as UTC


def test_a_broken_lanl_time_names_its_csv_line(tmp_path):
    path = tmp_path / "lanl.csv"
    path.write_text(LANL_HEADER + LANL_ROW.format(node=0) + LANL_ROW.format(node=1).replace("6/21/2003 10:54", "yesterday"))
    with pytest.raises(FailureLogFormatError, match=r"lanl\.csv:3: .*Prob Started"):
        read_lanl(path)


def test_real_lanl_file_reads_system_20(tmp_path):
    real = SHARED_DATA / "failures" / "lanl" / "LA-UR-05-7318-failure-data-1996-2005.csv.xz"
    if not real.exists():
        pytest.skip(f"shared data not present: {real}")
    log = read_lanl(real, system=20)
    assert len(log) == 2478
    assert log.supernodes.min() >= 0 and log.supernodes.max() < 128
    assert (log.downtime >= 0).all()


def test_lanl_xz_compressed_file_reads_like_plain(tmp_path):
    text = LANL_HEADER + LANL_ROW.format(node=7)
    plain, packed = tmp_path / "a.csv", tmp_path / "a.csv.xz"
    plain.write_text(text)
    packed.write_bytes(lzma.compress(text.encode()))
    assert read_lanl(plain).failed_at.tolist() == read_lanl(packed).failed_at.tolist()


@pytest.mark.parametrize("distribution", ["exponential", "weibull"])
def test_synthetic_failures_hit_the_exact_count_inside_the_span_and_repeat_with_the_seed(distribution):
    one = generate_failures(4000, 128, 100.0, 1e7, np.random.default_rng(5), distribution)
    two = generate_failures(4000, 128, 100.0, 1e7, np.random.default_rng(5), distribution)
    assert len(one) == 4000
    assert one.failed_at.min() >= 100.0 and one.failed_at.max() < 1e7
    assert np.array_equal(one.failed_at, two.failed_at) and np.array_equal(one.supernodes, two.supernodes)
    assert set(one.supernodes.tolist()) == set(range(128))


def test_exponential_failures_are_uniform_over_the_span_and_the_supernodes():
    log = generate_failures(20000, 128, 0.0, 1.0, np.random.default_rng(0))
    counts_per_tenth = np.histogram(log.failed_at, bins=10, range=(0, 1))[0]
    assert np.all(np.abs(counts_per_tenth - 2000) < 5 * np.sqrt(2000))
    per_node = np.bincount(log.supernodes, minlength=128)
    assert abs(per_node.mean() - 156.25) < 1e-9 and per_node.std() < 3 * np.sqrt(156.25)


def test_failure_count_scales_per_node_per_day():
    assert scale_failure_count(1000, 350, 365, 128, 730) == round(1000 * 128 / 350 * 2)
    with pytest.raises(ConfigurationError):
        scale_failure_count(1000, 0, 365, 128, 730)


def test_fit_to_span_maps_first_and_last_failure_and_keeps_downtime():
    log = FailureLog(np.array([10.0, 20.0, 30.0]), np.array([1, 2, 3]), np.array([15.0, np.nan, 31.0]))
    fitted = fit_to_span(log, 1000.0, 1200.0)
    assert fitted.failed_at.tolist() == [1000.0, 1100.0, 1200.0]
    assert fitted.downtime[0] == 5.0 and np.isnan(fitted.downtime[1]) and fitted.downtime[2] == 1.0
    assert shift(log, 5).failed_at.tolist() == [15.0, 25.0, 35.0]
    with pytest.raises(ConfigurationError):
        fit_to_span(log, 10.0, 5.0)


@pytest.mark.parametrize("spec", ["synthetic:x", "synthetic:10:gamma", "synthetic:10:weibull:extra", "failures.txt"])
def test_bad_failure_specs_are_refused(tmp_path, spec):
    if spec.endswith(".txt"):
        (tmp_path / spec).write_text("")
        spec = str(tmp_path / spec)
    with pytest.raises(ConfigurationError):
        load_failure_source(spec, 128)


def test_failure_specs_resolve():
    assert load_failure_source("none", 128) is None
    synthetic = load_failure_source("synthetic:500:weibull", 128)
    assert isinstance(synthetic, SyntheticFailures) and synthetic.count == 500 and synthetic.distribution == "weibull"
    assert len(load_failure_source("bundled", 128, (0.0, 100.0))) == 347


def test_bursty_failures_cluster_in_a_fixed_set_of_bursts_on_neighbouring_supernodes():
    from failure_logs.synthetic import generate_burst_failures
    from torus_sim.machine.topology import BGL_SUPERNODE_TORUS

    torus = BGL_SUPERNODE_TORUS
    neighbours = [torus.neighbours(n) for n in range(torus.size)]
    span = (0.0, 100 * 86400.0)  # 100 days: 50 bursts at 0.5 a day
    small = generate_burst_failures(100, *span, np.random.default_rng(7), neighbours)
    large = generate_burst_failures(2000, *span, np.random.default_rng(7), neighbours)
    assert len(small) == 100 and len(large) == 2000
    assert small.failed_at.min() >= 0 and large.failed_at.max() < span[1]

    def bursts(log):  # group failures less than 600 s after a burst's first one
        starts = [log.failed_at[0]]
        for at in log.failed_at[1:]:
            if at - starts[-1] > 600:
                starts.append(at)
        return starts

    assert len(bursts(large)) <= 50  # more failures make bursts bigger, not more numerous
    assert len(bursts(small)) <= 50
    # every failure of a burst hits its centre or a torus neighbour of it: at most 7 supernodes a burst
    order = np.argsort(large.failed_at)
    groups = np.cumsum(np.r_[True, np.diff(large.failed_at[order]) > 600])
    for group in np.unique(groups):
        assert len(set(large.supernodes[order][groups == group].tolist())) <= 7


# -- issue 40, section 1: two failures of one node with the same repair time ---------------------------------------


@pytest.mark.parametrize("kind", ["cluster", "torus"])
def test_a_node_repaired_twice_at_once_comes_back_once(kind):
    """Two failures of a node with one repair time schedule two repairs; the second finds it up and changes nothing.

    Before the fix the second repair counted the node free again on a cluster (a phantom free node: a
    later start was refused, "allocation of 33 nodes, the job occupies 34") and, on both platforms,
    added NaN to the node's downtime.
    """
    from torus_sim.machine.platforms.cluster import ClusterPlatform
    from torus_sim.machine.platforms.torus import TorusPlatform
    from torus_sim.machine.topology import Torus

    platform = ClusterPlatform(8) if kind == "cluster" else TorusPlatform(Torus((2, 2, 2)))
    platform.take_down(3, 100.0)
    platform.take_down(3, 100.0)
    assert platform.free_count() == 7
    assert platform.repair(3, 100.0) is True
    assert platform.repair(3, 100.0) is False
    assert platform.free_count() == 8 and not platform.down.any()
    if kind == "cluster":
        assert len(platform.free_nodes()) == 8


def test_duplicate_repairs_in_a_run_leave_the_counts_and_downtimes_whole():
    from torus_sim.engine import SchedulingModel
    from torus_sim.policies.easy import EasyPolicy

    from .conftest import make_workload

    workload = make_workload([(i, 10.0 * i, 500.0, 600.0, 2) for i in range(1, 40)])
    failures = FailureLog(np.array([50.0, 60.0]), np.array([1, 1]), np.array([400.0, 400.0]))
    model = SchedulingModel(workload, EasyPolicy("fcfs"), 4, failures, downtime="log")
    model.run()
    assert model.platform.free_count() == 4 == len(model.platform.free_nodes())
    assert model.node_agents[1].downtime == pytest.approx(350.0)


# The README's balancing run on CTC-SP2 with LANL system 20 that failed at t = 8,152,969 s (issue 40, section 1) is
# the documented sweep experiments/cross/cluster_lanl_ctc.toml's case "balancing a=0.1": tests/test_regenerate.py
# re-runs it and compares every value with docs/cross/cluster_lanl_ctc/results.csv (77,222 jobs, 551 kills), and
# tests/test_readme_commands.py runs the command as docs/guide/running.md shows it (the same run a third time cost 22 s).
