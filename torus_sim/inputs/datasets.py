"""The field's logs by name: the workload and failure logs the documentation uses, fetched and checked by hash.

Each entry names a public file by a short reference (``pwa:SDSC-SP2``, ``loghub:BGL-2k``, ``cfdr:LANL``,
``logaider:Mira``) with its origin URL (a pinned commit of the public repository it was copied from), its size,
SHA-256, licence and the citation its owners ask for. :func:`fetch` gets it with `pooch
<https://www.fatiando.org/pooch/>`_: downloaded once into the user's cache folder (``pooch.os_cache("torus-sim")``)
and checked against its hash on every use. ``TORUS_SIM_DATA`` names a local mirror instead of the cache (a folder
holding the files under their relative paths, as the repository's ``../shared/data`` does): a machine without
network points it there. Any ``--workload`` or ``--failures`` takes a reference where it takes a file
(:meth:`torus_sim.inputs.input_registry.InputRegistry.select`); ``torus-sim data`` lists, fetches and cites them.

References:
    Feitelson, Tsafrir, Krakov, "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014;
    Schroeder and Gibson, "A large-scale study of failures in high-performance computing systems", DSN 2006;
    Zhu et al., "Loghub", ISSRE 2023; Di et al., "LogAider", CCGrid 2017.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from torus_sim.core.errors import ConfigurationError, InputFileError

__all__ = [
    "DATASETS",
    "MIRROR_VARIABLE",
    "PREFIXES",
    "Dataset",
    "bundled_copy",
    "cache_folder",
    "dataset",
    "fetch",
    "is_reference",
    "is_under_prefix",
    "local_copy",
]

MIRROR_VARIABLE = "TORUS_SIM_DATA"
"""The environment variable naming a local mirror (the files under their relative paths) instead of the cache."""

_PWA = "https://www.cs.huji.ac.il/labs/parallel/workload"
_CLOUDSIM = (
    "https://raw.githubusercontent.com/abhijithremesh/cloudsimplus/cfe5b370641aa3e3b2c191657d7d866c0ff1ed29/"
    "cloudsim-plus-examples/src/main/resources/workload/swf"
)
_PWA_CITATION = (
    'D. G. Feitelson, D. Tsafrir, D. Krakov, "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014'
)
_PWA_LICENCE = "the Parallel Workloads Archive's terms: research use, keeping the log's Acknowledge / Copyright header lines"
_LOGAIDER = "https://raw.githubusercontent.com/disheng222/LogAider/56d47907ddd79a150d3ed4daf6ade2fea8478fc5"


@dataclass(frozen=True)
class Dataset:
    """One public data file.

    Attributes:
        name: the reference (``pwa:SDSC-SP2``): what ``--workload`` / ``--failures`` and :func:`fetch` take.
        path: its relative path in the cache or the mirror (``swf/SDSC-SP2-1998-4.2-cln.swf.gz``).
        url: where it is downloaded from (a pinned commit of the public repository it was copied from).
        size: bytes.
        sha256: the file's SHA-256 (as stored: compressed where it is).
        kind: ``workload`` or ``failures``.
        description: what it is, in a line.
        home: the data's own page.
        licence: its terms.
        citation: what its owners ask to be cited.
        companions: other entries fetched with it (a reader finds them beside it: Mira's maintenance periods and
            repair reservations).
        bundled: where the package ships a copy (relative to the folder holding the ``torus_sim`` and
            ``failure_logs`` packages), or None: the same bytes, or their gzip (the readers read either). A bundled
            entry is never downloaded: without a copy in the cache or the mirror, the shipped one is used.
    """

    name: str
    path: str
    url: str
    size: int
    sha256: str
    kind: str
    description: str
    home: str
    licence: str
    citation: str
    companions: tuple[str, ...] = ()
    bundled: str | None = None


DATASETS: dict[str, Dataset] = {
    entry.name: entry
    for entry in (
        Dataset(
            "pwa:NASA-iPSC",
            "swf/NASA-iPSC-1993-3.1-cln.swf.gz",
            f"{_CLOUDSIM}/NASA-iPSC-1993-3.1-cln.swf.gz",
            207_976,
            "5589ae9b2fb78e3bf92de097497cf33a91607de1ad54563e43533f7827597f29",
            "workload",
            "NASA Ames iPSC/860, 128 nodes, 18,239 jobs, 1993-10 to 1994-01 (BGL-FAULT's log; no waits recorded)",
            f"{_PWA}/l_nasa_ipsc/index.html",
            _PWA_LICENCE,
            _PWA_CITATION,
            bundled="torus_sim/inputs/data/NASA-iPSC-1993-3.1-cln.swf.gz",
        ),
        Dataset(
            "pwa:SDSC-SP2",
            "swf/SDSC-SP2-1998-4.2-cln.swf.gz",
            f"{_CLOUDSIM}/SDSC-SP2-1998-4.2-cln.swf.gz",
            1_205_570,
            "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac",
            "workload",
            "SDSC IBM SP2, 128 nodes, 59,715 jobs, 1998-05 to 2000-04 (BGL-FAULT's log)",
            f"{_PWA}/l_sdsc_sp2/index.html",
            _PWA_LICENCE + " (SDSC: research and non-profit use with its copyright notice)",
            _PWA_CITATION,
        ),
        Dataset(
            "pwa:CTC-SP2",
            "swf/CTC-SP2-1996-3.1-cln.swf.gz",
            f"{_CLOUDSIM}/CTC-SP2-1996-3.1-cln.swf.gz",
            1_487_336,
            "9fa28ac16c4386fb81b72a91d8bd8888281df2948a9d912769d387c5ee285bb4",
            "workload",
            "Cornell Theory Center IBM SP2, 338 batch nodes, 77,222 jobs, 1996-06 to 1997-06 (PV-EASY's log; EASY ran it)",
            f"{_PWA}/l_ctc_sp2/index.html",
            _PWA_LICENCE,
            _PWA_CITATION,
        ),
        Dataset(
            "pwa:HPC2N",
            "swf/HPC2N-2002-2.2-cln.swf.gz",
            f"{_CLOUDSIM}/HPC2N-2002-2.2-cln.swf.gz",
            2_997_773,
            "3c534857d6065cfd9cc35aac8d064c9c17172be7acf336de835006f43a626e64",
            "workload",
            "HPC2N Seth cluster, 240 processors, 202,871 jobs, 2002-08 to 2006-01 (MAUI; long queues)",
            f"{_PWA}/l_hpc2n/index.html",
            _PWA_LICENCE,
            _PWA_CITATION,
        ),
        Dataset(
            "pwa:RICC",
            "swf/RICC-2010-2.swf.gz",
            "https://raw.githubusercontent.com/DIR-LAB/deep-batch-scheduler/22a5397cd266c4af9198bd80bc0d70b25a1c16bf/"
            "code_to_use_for_workload_loading/data/RICC-2010-2.swf.gz",
            3_673_454,
            "38b7c5c9843d9a9f3d61a2d8b927f6d39b68b368fb713886b5f2ce3499f2ec82",
            "workload",
            "RIKEN Integrated Cluster of Clusters, 8,192 processors, 447,794 jobs, 2010-04 to 2010-09 (bursts, long queues)",
            f"{_PWA}/l_ricc/index.html",
            _PWA_LICENCE,
            _PWA_CITATION,
        ),
        Dataset(
            "loghub:BGL-2k",
            "failures/bgl/BGL_2k.log",
            "https://raw.githubusercontent.com/logpai/loghub/dd61d0952749ee7963bde24220d1be5ede023033/BGL/BGL_2k.log",
            317_150,
            "2a819ea540909db682005c9cf948387a40729b5c2e9f19d430e29ce704825496",
            "failures",
            "BlueGene/L RAS log, Loghub's 2,000-line sample, 2005-06 to 2006-01 (347 FATAL lines on 95 midplanes)",
            "https://github.com/logpai/loghub",
            "free for research and academic use (Loghub)",
            'J. Zhu et al., "Loghub: A large collection of system log datasets", ISSRE 2023; A. Oliner and J. Stearley, '
            '"What supercomputers say", DSN 2007',
            bundled="failure_logs/data/BGL_2k.log",
        ),
        Dataset(
            "cfdr:LANL",
            "failures/lanl/LA-UR-05-7318-failure-data-1996-2005.csv.xz",
            "https://raw.githubusercontent.com/Derek-Jones/ESEUR-code-data/1a49d102b38680531cb1d79ca131510b11b64e06/"
            "reliability/LA-UR-05-7318-failure-data-1996-2005.csv.xz",
            253_144,
            "ed32fd254a013df79f5f475f4eac85980f7229735e100ac427343ef449a75140",
            "failures",
            "Los Alamos failure data LA-UR-05-7318: 23,739 node failures with repairs, 23 systems, 1995-2005",
            "https://www.usenix.org/cfdr-data",
            "recognize Los Alamos National Laboratory for providing the data",
            'B. Schroeder and G. Gibson, "A large-scale study of failures in high-performance computing systems", DSN 2006',
        ),
        Dataset(
            "logaider:Mira",
            "failures/mira/allEvents.txt-0.5.cor",
            f"{_LOGAIDER}/example-output/similarity-based-filter/no-Maint-filter-interval=240s_43200s_key1/allEvents.txt-0.5.cor",
            3_583_861,
            "999b41b679937a9b42ee17e38c1126d0157e6031f29f7fefa708b1323899edd8",
            "failures",
            "Mira (Blue Gene/Q) FATAL RAS events 2013-2018, grouped by LogAider (1,384 events), with its maintenance and repairs",
            "https://github.com/disheng222/LogAider",
            "UChicago Argonne open-source licence (keep the notice and the DOE acknowledgement)",
            'S. Di et al., "LogAider: A tool for mining potential correlations of HPC log events", CCGrid 2017',
            companions=("logaider:Mira-maintenance", "logaider:Mira-reservations"),
            bundled="failure_logs/data/mira/allEvents.txt-0.5.cor.gz",
        ),
        Dataset(
            "logaider:Mira-maintenance",
            "failures/mira/maintenance_periods.txt",
            f"{_LOGAIDER}/schema/maintenance_periods.txt",
            6_440,
            "85b39250e7e99507903e9313f563b1a14d351feba7c2f2a90281b550553f699b",
            "failures",
            "Mira's 160 maintenance periods, 2013-04 to 2018-09 (read beside logaider:Mira)",
            "https://github.com/disheng222/LogAider",
            "UChicago Argonne open-source licence (keep the notice and the DOE acknowledgement)",
            'S. Di et al., "LogAider", CCGrid 2017',
            bundled="failure_logs/data/mira/maintenance_periods.txt",
        ),
        Dataset(
            "logaider:Mira-reservations",
            "failures/mira/total-reservation.txt",
            f"{_LOGAIDER}/schema/total-reservation.txt",
            195_717,
            "93c4b44289d341c216d51da75501345e34904926689148912feb9d5c202213f4",
            "failures",
            "Mira's 935 hardware-repair reservations, 2013-04 to 2018-09 (read beside logaider:Mira)",
            "https://github.com/disheng222/LogAider",
            "UChicago Argonne open-source licence (keep the notice and the DOE acknowledgement)",
            'S. Di et al., "LogAider", CCGrid 2017',
            bundled="failure_logs/data/mira/total-reservation.txt.gz",
        ),
    )
}
"""Every registered file, by reference."""


def is_reference(text) -> bool:
    """Whether ``text`` names a registered file.

    Args:
        text: any value (a scenario's ``workload`` or ``failures``, an option's text).

    Returns:
        True for a reference of :data:`DATASETS` (``pwa:SDSC-SP2``, in any case); False otherwise (a path, a name
        of a source, a number). Looks only in the fixed table: nothing is opened or called.
    """
    return isinstance(text, str) and _key(text) is not None


PREFIXES = tuple(sorted({name.split(":", 1)[0] for name in DATASETS}))
"""The collections the references name (``pwa``, ``cfdr``, ...): a text under one of them is a reference or a mistake."""


def is_under_prefix(text) -> bool:
    """Whether ``text`` reads as a reference of a known collection (``pwa:...``), registered or not (a typo).

    Args:
        text: any value (a scenario's ``workload`` or ``failures``); only text of the form ``prefix:rest`` with a
            prefix of :data:`PREFIXES` (any case) answers True.
    """
    return isinstance(text, str) and text.partition(":")[0].lower() in PREFIXES and ":" in text


def bundled_copy(name: str) -> Path | None:
    """The copy the package ships of a registered file, or None (not bundled, or not installed with the package).

    Args:
        name: a reference (any case).

    Returns:
        The shipped file's path (its bytes, or their gzip: :attr:`Dataset.bundled`), or None.

    Raises:
        ConfigurationError: no such entry.
    """
    entry = dataset(name)
    if entry.bundled is None:
        return None
    path = Path(__file__).resolve().parents[2] / entry.bundled
    return path if path.is_file() else None


def _key(text: str) -> str | None:
    if text in DATASETS:
        return text
    lowered = text.lower()
    return next((name for name in DATASETS if name.lower() == lowered), None)


def dataset(name: str) -> Dataset:
    """The entry a reference names.

    Args:
        name: a reference (any case).

    Returns:
        Its :class:`Dataset`.

    Raises:
        ConfigurationError: no such entry (the sentence lists them).
    """
    key = _key(name) if isinstance(name, str) else None
    if key is None:
        raise ConfigurationError(f"no registered data file {name!r}; known: {', '.join(DATASETS)} (torus-sim data list)")
    return DATASETS[key]


def cache_folder() -> Path:
    """Where files are kept.

    Returns:
        The folder the mirror variable ``TORUS_SIM_DATA`` names, else the user's cache folder for torus-sim
        (``pooch.os_cache("torus-sim")``, e.g. ``~/.cache/torus-sim``); it may not exist yet.
    """
    mirror = os.environ.get(MIRROR_VARIABLE)
    if mirror:
        return Path(mirror).expanduser()
    import pooch

    return Path(pooch.os_cache("torus-sim"))


def local_copy(name: str) -> Path | None:
    """Where a registered file is kept here, without fetching it.

    Args:
        name: a reference.

    Returns:
        The file's path if it is in the cache or the mirror already (not checked against its hash), else the copy the
        package ships (:func:`bundled_copy`), else None.

    Raises:
        ConfigurationError: no such entry.
    """
    path = cache_folder() / dataset(name).path
    return path if path.is_file() else bundled_copy(name)


def fetch(name: str) -> Path:
    """The local path of a registered file, downloaded into the cache the first time, checked against its SHA-256.

    Its companions (:attr:`Dataset.companions`) are fetched too. With ``TORUS_SIM_DATA`` set the file is taken
    from that mirror (and downloaded into it if it is missing there). A bundled entry (:attr:`Dataset.bundled`)
    missing from both is the copy the package ships: it is never downloaded.

    Args:
        name: a reference (``pwa:SDSC-SP2``; case does not matter).

    Returns:
        The file's path.

    Raises:
        ConfigurationError: no such entry.
        InputFileError: the file cannot be downloaded, or its bytes do not match the registered hash (a local
            copy is then left as it is: the sentence names it).
    """
    import pooch

    entry = dataset(name)
    for companion in entry.companions:
        fetch(companion)
    folder = cache_folder()
    shipped = bundled_copy(entry.name)
    if shipped is not None and not (folder / entry.path).is_file():
        return shipped
    fetcher = pooch.create(
        path=folder,
        base_url="",
        registry={entry.path: f"sha256:{entry.sha256}"},
        urls={entry.path: entry.url},
        env=MIRROR_VARIABLE,
        retry_if_failed=1,
    )
    target = folder / entry.path
    try:
        return Path(fetcher.fetch(entry.path, progressbar=False))
    except ValueError as error:  # pooch: the hash does not match
        raise InputFileError(
            target,
            f"does not match {entry.name}'s SHA-256 {entry.sha256} ({str(error).splitlines()[0]}); delete it to fetch again",
        ) from None
    except Exception as error:  # no network, an HTTP error, a folder that cannot be written
        where = f"the mirror {MIRROR_VARIABLE}={folder}" if os.environ.get(MIRROR_VARIABLE) else f"the cache {folder}"
        raise InputFileError(
            target,
            f"{entry.name} is not in {where} and could not be downloaded ({_reason(error)}): without network, copy the "
            f"file there (as {entry.path}; from {entry.url}), or set {MIRROR_VARIABLE} to a folder that holds the "
            "files under those paths (torus-sim data list shows what is where)",
        ) from None


def _reason(error: Exception) -> str:
    """A download's failure in a few words: ``no network: the host's name did not resolve``, ``HTTPError: 404 ...``."""
    text = str(error)
    if "NameResolution" in text or "Name or service not known" in text or "Temporary failure in name resolution" in text:
        return "no network: the host's name did not resolve"
    if "ConnectTimeout" in text or "timed out" in text:
        return "no network: the connection timed out"
    if "Connection refused" in text or "ConnectionError" in type(error).__name__ or "Max retries" in text:
        return "no network: the connection failed"
    first = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {first[:120]}"
