"""The soak: the local pipeline under injected faults, judged by ``docindex reconcile``.

``python -m soak`` (``make soak``) builds a bucket of mixed documents
on the embedded local endpoints (moto server, a real OpenSearch node), storms it with
overwrites, deletes, re-creates, renames and a backfill, and drives the real
handlers the way AWS does while faults are injected over real HTTP:

- ``workload``: the documents and the storm, with the expected end state;
- ``delivery``: the notification system with duplicates, both shapes, shuffling
  (the shapes themselves: ``devkit.messages``);
- ``sandbox``: Lambda execution environments (processes) and the SQS event
  source mapping that invokes them (``devkit.local.runner``'s pieces), kills
  them at their timeout or mid-batch;
- ``runtime``: the sandbox process itself (it loads the handler of the current
  code, or of the previous release during the rolling upgrade: ``releases``);
- ``workerproc``: the OCR worker as a process, and its faults;
- ``mover``: the local stand-in for SQS ``StartMessageMoveTask``;
- ``judge``: reconcile, the DLQs, writes per change, content per object;
- ``drills``: the disaster drills (index deleted or restored, ledger restored,
  idempotency table lost) with the operator's commands;
- ``run``: one seed from start to verdict; ``__main__``: the command line.

From the dev kit it also uses the fault-injecting HTTP proxies in front of
OpenSearch and AWS (``devkit.faults``, which also count every successful write
and every message sent), and moto server (``devkit.local.servers``).

Nothing here is imported by the handlers: the soak is a harness around them.
"""
