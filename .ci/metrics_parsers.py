"""Parses /metrics as scrapers do, with the Python prometheus_client's own parsers, and fails
when a family lost its type or an expected family or sample is missing (called by
.ci/metrics with the 0.0.4 text and the OpenMetrics text, after a /move, a streamed /move, a
/review and a deterministic overrun).

The 0.0.4 parser types a family by its `# TYPE` line; a counter typed under its OpenMetrics
name (without `_total`) leaves its `_total` samples in an untyped family of their own, which
is how every counter lost its type before the server spoke 0.0.4.
"""

import sys

from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families as text_families

# Family (as the parsers name it: a counter without `_total`) -> type. The build info is an
# info metric in OpenMetrics and a gauge `..._info` in 0.0.4.
EXPECTED = {
    "kibitz_http_requests": "counter",
    "kibitz_http_request_duration_seconds": "histogram",
    "kibitz_http_connections_open": "gauge",
    "kibitz_event_streams_open": "gauge",
    "kibitz_move_requests": "counter",
    "kibitz_move_duration_seconds": "histogram",
    "kibitz_review_requests": "counter",
    "kibitz_review_duration_seconds": "histogram",
    "kibitz_review_plies": "counter",
    "kibitz_search_depth": "histogram",
    "kibitz_search_nodes": "histogram",
    "kibitz_cache_misses": "counter",
    "kibitz_searches_in_flight": "gauge",
    "kibitz_searches_queued": "gauge",
    "kibitz_searches_cancelled": "counter",
    "kibitz_rejections": "counter",
    "kibitz_search_panics": "counter",
    "process_cpu_seconds": "counter",
    "process_resident_memory_bytes": "gauge",
    "process_virtual_memory_bytes": "gauge",
    "process_open_fds": "gauge",
    "process_max_fds": "gauge",
    "process_start_time_seconds": "gauge",
}

# Samples the requests sent must have left: (name, labels it must have) -> least value.
SAMPLES = [
    ("kibitz_move_requests_total", {"game": "tictactoe", "status": "200"}, 1),
    ("kibitz_move_requests_total", {"game": "connect4", "status": "200"}, 1),
    ("kibitz_review_requests_total", {"game": "tictactoe", "status": "200"}, 1),
    ("kibitz_review_plies_total", {"game": "tictactoe"}, 3),
    ("kibitz_rejections_total", {"reason": "deterministic_overrun"}, 1),
    ("kibitz_http_connections_open", {}, 1),
    ("kibitz_event_streams_open", {"route": "/move"}, 0),
    ("kibitz_build_info", {}, 1),
    ("process_resident_memory_bytes", {}, 1_000_000),
    ("process_open_fds", {}, 3),
]


def check(format_name, families):
    problems = []
    types = {}
    for family in families:
        if family.name in types:
            problems.append(f"family {family.name} appears twice")
        types[family.name] = family.type
        if family.type in ("unknown", "untyped"):
            problems.append(f"{family.name} has no type ({family.type})")
        for sample in family.samples:
            if sample.name.endswith("_total") and family.type != "counter":
                problems.append(f"{sample.name} is in a {family.type} family {family.name}")
    build = "info" if format_name == "OpenMetrics" else "gauge"
    build_family = "kibitz_build" if format_name == "OpenMetrics" else "kibitz_build_info"
    for name, kind in {**EXPECTED, build_family: build}.items():
        if types.get(name) != kind:
            problems.append(f"{name}: expected a {kind}, found {types.get(name)}")
    samples = [s for f in families for s in f.samples]
    for name, labels, least in SAMPLES:
        values = [
            s.value
            for s in samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
        ]
        if not values or max(values) < least:
            problems.append(f"{name}{labels}: expected at least {least}, found {values}")
    build_labels = [s.labels for s in samples if s.name == "kibitz_build_info"]
    if not build_labels or not build_labels[0].get("version"):
        problems.append(f"kibitz_build_info has no version: {build_labels}")
    counters = sum(1 for kind in types.values() if kind == "counter")
    print(f"{format_name}: {len(types)} families ({counters} counters), {len(samples)} samples")
    return problems


def main():
    text_path, openmetrics_path = sys.argv[1:3]
    with open(text_path, encoding="utf-8") as f:
        text = f.read()
    with open(openmetrics_path, encoding="utf-8") as f:
        openmetrics = f.read()
    problems = check("0.0.4", list(text_families(text)))
    problems += check("OpenMetrics", list(openmetrics_families(openmetrics)))
    for problem in problems:
        print("problem:", problem)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
