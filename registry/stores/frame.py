"""Result rows as a DataFrame, fast: pyarrow parsing plus a columnar cache of immutable files.

Every results file is immutable (one per run), so each is parsed once: new files are parsed
with `pyarrow.json` into a parquet *shard* whose metadata lists the files it covers; reads load
the shards with string columns dictionary-encoded (pandas categoricals), which keeps a
1,000,000-row frame well under a second. Shards keep the `ResultRow` fields except `output` and
`checks`; a frame has the ones the aggregations read (`FRAME_COLUMNS`: identity, outcome,
tokens, dollars, time), which over 2,000,000 rows is 140 MB less to load (use `read_results`
for whole rows). String columns are pandas categoricals, `passed` a nullable boolean,
`created_at` a UTC timestamp. A cache that no longer matches the files is rebuilt.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
import pyarrow.parquet as pq
from filelock import FileLock

from registry._io import atomic_write_bytes
from registry.errors import RegistryError

log = logging.getLogger(__name__)

_STRING = ("run_id", "skill_name", "skill_version", "skill_repo", "skill_revision",
           "content_hash", "model", "mode", "arm", "case_id", "error", "error_kind",
           "suite_hash", "placement", "produced_by", "produced_via", "design")
_TIME = pa.timestamp("us", tz="UTC")
_FIELDS: list[tuple[str, pa.DataType]] = [
    *((name, pa.string()) for name in _STRING[:10]),
    ("repeat", pa.int64()), ("passed", pa.bool_()), ("score", pa.float64()),
    ("input_tokens", pa.int64()), ("output_tokens", pa.int64()), ("cost_usd", pa.float64()),
    ("latency_s", pa.float64()), *((name, pa.string()) for name in _STRING[10:]),
    ("suite_cases", pa.int64()), ("run_cases", pa.int64()), ("planned_runs", pa.int64()),
    ("skill_loaded", pa.bool_()), ("cached", pa.bool_()), ("expect_skill", pa.bool_()),
    ("created_at", pa.string()),
]
_PARSE_SCHEMA = pa.schema(_FIELDS)
SCHEMA = pa.schema([*_FIELDS[:-1], ("created_at", _TIME)])
COLUMNS = tuple(SCHEMA.names)
#: What a frame holds: every column `evaluation.grouping.Rows` reads (score, latency, revision,
#: content hash and the cache/load flags are for whole rows only; an adaptive run's design and
#: each row's repeat give the level its figures are reported at).
FRAME_COLUMNS = tuple(name for name in COLUMNS if name not in (
    "score", "latency_s", "skill_revision", "content_hash", "skill_loaded", "cached"))
FANOUT = 16  # shards of one size class merged at a time
COLUMN_GROUP = 4  # frame columns read and converted at a time (bounds a load's peak memory)
FETCHERS = 8  # sources fetched at once (huggingface_hub's own default for snapshots)
_SOURCES_KEY = b"hubskills.sources"

#: A results file: its key (path plus size or blob id) -> a function returning its local path.
Sources = Mapping[str, Callable[[], Path]]


def empty_frame() -> pd.DataFrame:
    """A frame with the result columns and no rows."""
    return _to_pandas(SCHEMA.empty_table().select(list(FRAME_COLUMNS)))


# What building a row of the schema raises for a value it does not take: arrow's own errors,
# an int over 64 bits, a lone surrogate ("\ud800", valid JSON) that is no UTF-8 (a review note).
_NOT_A_ROW = (pa.ArrowException, OverflowError, UnicodeError, ValueError, TypeError)


def parse_jsonl(data: bytes) -> pa.Table:
    """Parse JSONL result rows into the frame schema; unknown and big fields are dropped, and
    so is a line that is not a row of that schema (not JSON, not UTF-8, a value of another type
    or out of range): one bad line never takes the other rows, or the board, with it."""
    if not data.strip():
        return SCHEMA.empty_table()
    options = pa_json.ParseOptions(explicit_schema=_PARSE_SCHEMA,
                                   unexpected_field_behavior="ignore")
    try:
        table = pa_json.read_json(io.BytesIO(data), parse_options=options,
                                  read_options=pa_json.ReadOptions(block_size=1 << 24))
        table.validate(full=True)  # the reader keeps bytes that are not UTF-8 unchecked
    except _NOT_A_ROW:
        table = _parse_leniently(data)
    return _with_times(table.select(list(COLUMNS)))


def _with_times(table: pa.Table) -> pa.Table:
    """`created_at` as a UTC timestamp (unparseable values become null)."""
    column = table["created_at"]
    try:
        times = pc.cast(column, _TIME)
    except pa.ArrowInvalid:
        times = pa.array([_parse_time(v) for v in column.to_pylist()], _TIME)
    return table.set_column(table.schema.get_field_index("created_at"), "created_at", times)


def _parse_time(value: str | None) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value or "")
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _parse_leniently(data: bytes) -> pa.Table:
    """Line by line, keeping only the lines that are rows of the schema (`parse_jsonl`)."""
    records = []
    for line in data.splitlines():
        try:
            record = json.loads(line)  # bytes: not UTF-8 is a ValueError too
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append({name: record.get(name) for name in COLUMNS})
    try:
        return pa.Table.from_pylist(records, schema=_PARSE_SCHEMA)
    except _NOT_A_ROW:  # one at a time, to leave out only the bad
        pass
    tables = []
    for record in records:
        try:
            tables.append(pa.Table.from_pylist([record], schema=_PARSE_SCHEMA))
        except _NOT_A_ROW:
            log.warning("skipping a result row that does not match the schema")
    return pa.concat_tables(tables) if tables else _PARSE_SCHEMA.empty_table()


def load_frame(sources: Sources, cache_dir: Path,
               run_ids: Mapping[str, str] | None = None) -> pd.DataFrame:
    """All rows of `sources` as a DataFrame, parsing only files no shard covers yet.

    ``run_ids`` (source key -> the run id its path names) files every row of each source
    under that run, whatever its rows state: a row's `run_id` is its writer's text, and a
    submitted file whose rows named another pending run was summed into that run under its
    badge (the rows of a cache dir read with ``run_ids`` are filed so, always)."""
    if not sources:
        return empty_frame()
    cache_dir.mkdir(parents=True, exist_ok=True)
    for attempt in range(3):
        with _locked(cache_dir / ".lock"):
            index = _index(cache_dir)
            covered = [key for keys in index.values() for key in keys]
            if len(covered) != len(set(covered)) or not set(covered) <= set(sources):
                log.info("results changed underneath the frame cache; rebuilding it")
                _clear(cache_dir)
                covered = []
            missing = sorted(set(sources) - set(covered))
            if missing:
                _write_shard(cache_dir, missing, _parsed(sources, missing, run_ids))
            _merge_tiers(cache_dir)
            frame = _read_frame(sorted(cache_dir.glob("*.parquet")))
        if frame is not None:
            return frame
        log.info("a damaged frame shard was dropped; reading again (attempt %d)", attempt + 1)
    raise RegistryError(f"the results cache in {cache_dir} keeps failing to read",
                        hint=f"remove {cache_dir} (it is only a cache) and retry")


def _parsed(sources: Sources, keys: list[str], run_ids: Mapping[str, str] | None) -> pa.Table:
    """The rows of sources ``keys``, parsed at once, or (``run_ids``) each source alone with
    every row filed under its run id (`load_frame`)."""
    paths = _fetch(sources, keys)
    if run_ids is None:
        return parse_jsonl(b"".join(_with_newline(path.read_bytes()) for path in paths))
    return pa.concat_tables([_filed_under(parse_jsonl(path.read_bytes()), run_ids[key])
                             for key, path in zip(keys, paths, strict=True)])


def _filed_under(table: pa.Table, run_id: str) -> pa.Table:
    """``table`` with every row's `run_id` set to ``run_id``."""
    index = table.schema.get_field_index("run_id")
    return table.set_column(index, "run_id", pa.array([run_id] * table.num_rows, pa.string()))


def _fetch(sources: Sources, keys: list[str]) -> list[Path]:
    """The local paths of `keys`, fetched `FETCHERS` at a time: a Hub source downloads on
    first use, and one round trip after another would make a cold read of many runs as slow
    as their sum."""
    if len(keys) < 2:
        return [sources[key]() for key in keys]
    with ThreadPoolExecutor(min(FETCHERS, len(keys))) as pool:
        return list(pool.map(lambda key: sources[key](), keys))


def add_source(cache_dir: Path, key: str, data: bytes) -> None:
    """Parse one just-written results file into its own shard, so reads never parse it.

    Best effort: on failure the file is simply parsed at the next read.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    try:
        with _locked(cache_dir / ".lock"):
            if any(key in keys for keys in _index(cache_dir).values()):
                return  # a concurrent read parsed it already
            _write_shard(cache_dir, [key], parse_jsonl(data))
            _merge_tiers(cache_dir)
    except (OSError, pa.ArrowException) as err:
        log.warning("could not cache %s for the results frame: %s", key, err)


def _with_newline(data: bytes) -> bytes:
    return data if data.endswith(b"\n") or not data else data + b"\n"


def _to_pandas(table: pa.Table, *, free: bool = False) -> pd.DataFrame:
    """The table as pandas; with `free` (the caller's last reference), each column's arrow
    buffers are released as soon as it is converted, so a large load peaks near the size of
    the frame instead of twice it."""
    mapper = {pa.bool_(): pd.BooleanDtype()}.get
    if not free:
        return table.to_pandas(types_mapper=mapper)
    return table.to_pandas(types_mapper=mapper, self_destruct=True, split_blocks=True)


def _shard_name(keys: list[str]) -> str:
    return hashlib.sha1("\n".join(keys).encode()).hexdigest()[:16] + ".parquet"


def _write_shard(cache_dir: Path, keys: list[str], table: pa.Table) -> None:
    meta = {_SOURCES_KEY: json.dumps(keys).encode()}
    sink = io.BytesIO()
    pq.write_table(table.cast(SCHEMA).replace_schema_metadata(meta), sink)
    atomic_write_bytes(cache_dir / _shard_name(keys), sink.getvalue())


def _index(cache_dir: Path) -> dict[Path, list[str]]:
    """Each shard and the source keys it covers; unreadable shards are deleted (a cache)."""
    index = {}
    for path in sorted(cache_dir.glob("*.parquet")):
        try:
            schema = pq.read_schema(path)
            if not schema.remove_metadata().equals(SCHEMA):  # written before a new column
                raise ValueError("outdated shard")
            index[path] = json.loads((schema.metadata or {})[_SOURCES_KEY])
        except (OSError, KeyError, ValueError, pa.ArrowException):
            path.unlink(missing_ok=True)
    return index


def _read_frame(paths: list[Path]) -> pd.DataFrame | None:
    """The shards' `FRAME_COLUMNS` as one frame; None if a shard was damaged (it is deleted;
    one that will not convert, every one: each is parsed again).

    Read `COLUMN_GROUP` columns at a time, each group converted and its arrow memory given back
    before the next is read: over 2,000,000 rows the load then peaks near the frame's own size
    (measured: 412 MB resident instead of 605 MB with every column read at once)."""
    columns, parts = list(FRAME_COLUMNS), []
    for start in range(0, len(columns), COLUMN_GROUP):
        group = columns[start:start + COLUMN_GROUP]
        tables = _read_tables(paths, group)
        if tables is None:
            return None
        table = pa.concat_tables(tables) if tables else SCHEMA.empty_table().select(group)
        del tables  # the table alone holds the columns: converting frees them one by one
        try:
            parts.append(_to_pandas(table, free=True))
        except pa.ArrowException:  # a shard an older parser wrote with bytes not UTF-8
            for path in paths:
                path.unlink(missing_ok=True)
            return None
        del table
        pa.default_memory_pool().release_unused()
    return pd.concat(parts, axis=1)


def _read_tables(paths: list[Path], columns: list[str]) -> list[pa.Table] | None:
    """`columns` of every shard, strings dictionary-encoded; None if one was damaged."""
    tables = []
    for path in paths:
        try:
            table = pq.read_table(path, columns=columns,
                                  read_dictionary=[name for name in columns if name in _STRING])
        except (OSError, pa.ArrowException):
            path.unlink(missing_ok=True)
            return None
        tables.append(table.replace_schema_metadata(None))
    return tables


def _level(count: int) -> int:
    level = 0
    while count >= FANOUT:
        count //= FANOUT
        level += 1
    return level


def _merge_tiers(cache_dir: Path) -> None:
    """Merge FANOUT shards of the same size class into one, so shards stay few (LSM tiers)."""
    while True:
        tiers: dict[int, list[tuple[Path, list[str]]]] = {}
        for path, keys in _index(cache_dir).items():
            tiers.setdefault(_level(len(keys)), []).append((path, keys))
        group = next((g[:FANOUT] for _, g in sorted(tiers.items()) if len(g) >= FANOUT), None)
        if group is None:
            return
        keys = sorted(key for _, ks in group for key in ks)
        _write_shard(cache_dir, keys, pa.concat_tables([pq.read_table(p) for p, _ in group]))
        for path, _ in group:
            path.unlink(missing_ok=True)


def _clear(cache_dir: Path) -> None:
    for path in cache_dir.glob("*.parquet"):
        path.unlink(missing_ok=True)


def _locked(path: Path) -> FileLock:
    """An exclusive cross-process lock held while the cache is read and updated."""
    return FileLock(path, preserve_lock_file=True)
