"""OCR worker verdicts: the service exists and can scale above zero while jobs wait."""

from __future__ import annotations

from docindex.ops.diagnose.facts.services import WorkerFacts
from docindex.ops.diagnose.report import Check, Status


def judge_ocr_worker(facts: WorkerFacts) -> Check:
    """FAIL when the service is gone or its maximum is 0 (WARN when `docindex pause` did that)."""
    if not facts.found:
        return Check("ocr-worker", "OCR worker service", Status.FAIL, f"service {facts.service} not found")
    evidence = [f"{facts.cluster}/{facts.service}: desired {facts.desired}, running {facts.running}"]
    bounds = facts.bounds
    evidence.append(f"auto scaling bounds: {bounds[0]}..{bounds[1]}" if bounds else "no scalable target")
    evidence.append(f"OCR queue depth {facts.waiting}")
    if bounds and bounds[1] == 0:
        if facts.paused:
            return Check(
                "ocr-worker",
                "OCR worker service",
                Status.WARN,
                f"scaled to zero by `docindex pause` since {facts.paused.paused_at}",
                evidence,
                fix="docindex resume",
            )
        return Check(
            "ocr-worker",
            "OCR worker service",
            Status.FAIL,
            "maximum capacity is 0: no OCR job will ever run",
            evidence,
            fix="docindex resume --min 0 --max 10, or redeploy (WorkerMaxTasks)",
        )
    if facts.waiting and facts.running == 0 and facts.desired == 0:
        return Check(
            "ocr-worker",
            "OCR worker service",
            Status.WARN,
            f"{facts.waiting} OCR jobs wait and no task runs (the wake alarm starts one within minutes)",
            evidence,
        )
    return Check("ocr-worker", "OCR worker service", Status.OK, f"{facts.running} task(s) running", evidence)
