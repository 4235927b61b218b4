"""Two candidate processes in turn (softmax, pytorch): the writer, then the reader; prints what the reader read."""
from pathlib import Path

from kstrata.backends.registry import get_backend
from kstrata.sandbox import client
from kstrata.sandbox.client import fresh
from kstrata.tasks.loader import resolve_task
from kstrata.verify.runner import candidate_process, task_record

HERE = Path(__file__).resolve().parent
task, b = resolve_task("softmax"), get_backend("pytorch")
for part in ("writer.py", "reader.py"):
    text = (HERE / "common.py").read_text() + "\n" + (HERE / part).read_text()
    p = fresh(candidate_process(task, b, False, None))
    try:
        h, _ = p.request({"op": "load", "backend": "pytorch", "task": task_record(task), "sources": {"source": text},
                          "shape": dict(task.small_shapes[0]), "seed": 0, "init": [], "poison": 0}, [], timeout_s=120)
        print(part, h.get("ok"), str(h.get("message", ""))[-200:])
    finally:
        p.close()
client.close_zygotes()
