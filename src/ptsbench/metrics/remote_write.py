"""The samples as a Prometheus remote-write request (remote write 1.0): a protobuf WriteRequest of one TimeSeries
per series (its labels sorted by name, `__name__` among them, labels with an empty value left out; its sample at its
own time or now), snappy-compressed in the block format, sent with the headers the spec asks for. The schema is the
spec's (prompb: WriteRequest, TimeSeries, Label, Sample), built at run time with protobuf's descriptor API, so no
generated code is kept; protobuf and cramjam (snappy) are imported only when a push is made."""

import functools
from collections.abc import Iterable
from typing import Any

from ptsbench.errors import PtsbenchError
from ptsbench.metrics.series import Sample

HEADERS = {"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
           "X-Prometheus-Remote-Write-Version": "0.1.0", "User-Agent": "ptsbench"}
# the paths remote-write receivers listen on (Prometheus, VictoriaMetrics: /api/v1/write; Mimir, Cortex, Grafana
# Cloud: .../push; Thanos: /api/v1/receive); every other URL gets InfluxDB line protocol
PATH_ENDINGS = ("/api/v1/write", "/push", "/receive")
INSTALL_HINT = "install them: pip install 'ptsbench[remote-write]' (protobuf and cramjam)"


def is_remote_write(url: str) -> bool:
    """Whether a push URL is a remote-write receiver's (by its path, PATH_ENDINGS)."""
    from urllib.parse import urlsplit

    return urlsplit(url).path.rstrip("/").endswith(PATH_ENDINGS)


def check_installed(option: str) -> None:
    """PtsbenchError when the packages remote write needs are missing (before any IO)."""
    try:
        import cramjam  # noqa: F401
        import google.protobuf  # noqa: F401
    except ImportError as error:
        raise PtsbenchError(f"{option}: pushing Prometheus remote write needs {error.name}", INSTALL_HINT) from None


@functools.cache
def write_request_class() -> Any:
    """The spec's WriteRequest message class (prompb/remote.proto and types.proto, the parts remote write 1.0 uses)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    field = descriptor_pb2.FieldDescriptorProto
    schema = descriptor_pb2.FileDescriptorProto(name="ptsbench/prompb.proto", package="prometheus", syntax="proto3")
    messages: dict[str, list[tuple[str, int, int, str | None, int]]] = {
        "Label": [("name", 1, field.TYPE_STRING, None, field.LABEL_OPTIONAL),
                  ("value", 2, field.TYPE_STRING, None, field.LABEL_OPTIONAL)],
        "Sample": [("value", 1, field.TYPE_DOUBLE, None, field.LABEL_OPTIONAL),
                   ("timestamp", 2, field.TYPE_INT64, None, field.LABEL_OPTIONAL)],  # Unix ms
        "TimeSeries": [("labels", 1, field.TYPE_MESSAGE, ".prometheus.Label", field.LABEL_REPEATED),
                       ("samples", 2, field.TYPE_MESSAGE, ".prometheus.Sample", field.LABEL_REPEATED)],
        "WriteRequest": [("timeseries", 1, field.TYPE_MESSAGE, ".prometheus.TimeSeries", field.LABEL_REPEATED)],
    }
    for name, fields in messages.items():
        message = schema.message_type.add(name=name)
        for field_name, number, kind, type_name, label in fields:
            message.field.add(name=field_name, number=number, type=kind, label=label,
                              **({"type_name": type_name} if type_name else {}))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(schema)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("prometheus.WriteRequest"))


def write_request(samples: Iterable[Sample], now_ms: int) -> bytes:
    """The snappy-compressed WriteRequest of `samples` (empty bytes when there is none to send). A value that is not
    a finite number is sent as it is (Prometheus keeps NaN and infinities)."""
    import cramjam

    request = write_request_class()()
    for sample in samples:
        series = request.timeseries.add()
        labels = {"__name__": sample.metric.name, **{key: value for key, value in sample.labels.items() if value}}
        for name, value in sorted(labels.items()):
            series.labels.add(name=name, value=value)
        series.samples.add(value=float(sample.value), timestamp=sample.time_ms if sample.time_ms is not None
                           else now_ms)
    if not request.timeseries:
        return b""
    return bytes(cramjam.snappy.compress_raw(request.SerializeToString()))
