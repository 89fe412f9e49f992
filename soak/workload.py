"""The soak's documents and its storm of changes, with the end state the index must reach.

Every version of every object carries a unique token in its text (its
content, so its ETag, is unique too); the model remembers, per key, whether
the object exists and what its document must say: the token in ``content``,
``ocr_status: done`` for scans and files handed to the worker, or the
``extraction_error`` of a file built to fail.

The S3 calls go straight to the local endpoint (the harness plays the user
and S3's notification system, not the system under test). Each call yields
the ``Change`` its notification announces, with S3's semantics: the event time
is when the request finished, and for a share of the keys an S3 sequencer
that grows with every change of the key (the rest stand for emulators that
send none: their changes of one key are kept at least 2 ms apart, since
without a sequencer milliseconds are all that order them).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

from devkit import samples
from devkit.messages import Change

JA_LINES = (
    "東京都の売上は前年同期比で増加しました。",
    "会議議事録：次回の定例会議は来週の月曜日です。",
    "見積書の有効期限は発行日から三十日間です。",
    "請求書は月末締め翌月末払いでお願いします。",
    "新製品の発売に向けて営業部と開発部が連携します。",
    "髙橋さんと山﨑さんが出張報告書を提出しました。",
)
EN_LINES = (
    "Quarterly revenue grew in the Tokyo region.",
    "Minutes of the weekly meeting are attached.",
    "The quotation is valid for thirty days.",
    "Please review the contract before Friday.",
)
FOLDERS = (
    "営業部/2024年度 報告",
    "総務部/会議 議事録",
    "経理部/請求書+見積書",
    "開発部/設計 (draft)",
    "English/Quarterly Reports",
    "共有/100% 達成",
    "スキャン/受領 書類",
    "ｶﾀｶﾅ/ＡＢＣ 全角",
)
STEMS = ("四半期売上報告", "定例会議 議事録", "見積書 No.", "report+final", "plan 100%", "a&b (copy)", "契約書")

# kind -> (weight, extension)
KINDS: dict[str, tuple[float, str]] = {
    "pdf": (16, "pdf"),
    "docx": (13, "docx"),
    "xlsx": (9, "xlsx"),
    "pptx": (8, "pptx"),
    "xls": (2, "xls"),
    "html": (8, "html"),
    "txt": (10, "txt"),
    "txt_cp932": (4, "txt"),
    "csv": (7, "csv"),
    "md": (5, "md"),
    "scan_png": (2, "png"),
    "scan_jpeg": (1, "jpg"),
    "scan_tiff": (1, "tif"),
    "scan_pdf": (2, "pdf"),
    "large_text": (2, "txt"),
    "corrupt_pdf": (1, "pdf"),
    "encrypted_pdf": (1, "pdf"),
    "zip_bomb_docx": (1, "docx"),
    "zip_bomb_xlsx": (0.5, "xlsx"),
    "empty": (0.5, "txt"),
    "lying_type": (1, "docx"),
}
# The folder of short-lived files (``flash``): the soak's write-delay fault always holds their writes.
RACE_FOLDER = "一時 tmp"
# Kinds an overwrite picks from: documents people edit.
EDIT_KINDS = ("pdf", "docx", "xlsx", "pptx", "html", "txt", "csv", "md", "scan_png", "scan_jpeg", "large_text")


@dataclass(frozen=True)
class Expectation:
    """What the index must hold for one object version."""

    token: str | None = None  # must appear in ``content``
    ocr: bool = False  # ``ocr_status`` must end ``done``
    error: str | None = None  # ``extraction_error`` must be this


@dataclass(frozen=True)
class Document:
    data: bytes
    content_type: str
    expect: Expectation


@dataclass(frozen=True)
class _Seed:
    """What a builder gets: the version's token and a few random lines."""

    token: str
    ja: str
    en: str
    rng: random.Random
    large_bytes: int

    @property
    def text(self) -> str:
        return f"{self.ja}\n{self.en}\n管理番号 {self.token}"


_OOXML = "application/vnd.openxmlformats-officedocument"


def _large_text(s: _Seed) -> Document:
    # Above MAX_OBJECT_BYTES: never read by the Lambda, extracted by the worker. The filler
    # is punctuation: the engine's analysis costs CPU by the volume of text.
    filler = ("-" * 79 + "\n") * (s.large_bytes // 80 + 1)
    return Document(samples.make_text(f"{s.text}\n{filler}"), "text/plain", Expectation(token=s.token, ocr=True))


def _zip_bomb(office: str) -> Callable[[_Seed], Document]:
    folder = "word" if office == "docx" else "xl"

    def build(s: _Seed) -> Document:
        data = samples.make_zip_bomb(office, inflated_mb=2, member=f"{folder}/media/{s.token}.bin")
        return Document(data, "application/zip", Expectation(error="zip_bomb"))

    return build


def _plain(data: Callable[[_Seed], bytes], content_type: str) -> Callable[[_Seed], Document]:
    return lambda s: Document(data(s), content_type, Expectation(token=s.token))


_BUILDERS: dict[str, Callable[[_Seed], Document]] = {
    "pdf": _plain(lambda s: samples.make_pdf([s.text, s.ja], f"報告書 {s.token}"), "application/pdf"),
    "docx": _plain(
        lambda s: samples.make_docx(
            [s.ja, s.en, f"管理番号 {s.token}"], title=f"文書 {s.token}", table=[["項目", "値"], ["番号", s.token]]
        ),
        f"{_OOXML}.wordprocessingml.document",
    ),
    "xlsx": _plain(
        lambda s: samples.make_xlsx(
            {"集計": [["番号", "内容"], [s.token, s.ja], ["金額", s.rng.randint(1000, 99999)]]}
        ),
        f"{_OOXML}.spreadsheetml.sheet",
    ),
    "pptx": _plain(
        lambda s: samples.make_pptx([f"事業計画\n{s.ja}", f"{s.en}\n{s.token}"], notes=[None, "補足"]),
        f"{_OOXML}.presentationml.presentation",
    ),
    "xls": _plain(
        lambda s: samples.make_xls({"Sheet1": [["番号", s.token], ["内容", s.ja]]}), "application/vnd.ms-excel"
    ),
    "html": _plain(
        lambda s: samples.make_html(f"お知らせ {s.token}", [s.ja, s.en, s.token], s.rng.choice(("utf-8", "cp932"))),
        "text/html",
    ),
    "txt": _plain(lambda s: samples.make_text(s.text + "\n"), "text/plain"),
    "txt_cp932": _plain(lambda s: samples.make_text(s.text + "\n", "cp932", newline="\r\n"), "text/plain"),
    "csv": _plain(
        lambda s: samples.make_csv([["番号", "内容"], [s.token, s.ja], ["en", s.en]], s.rng.choice(("cp932", "utf-8"))),
        "text/csv",
    ),
    "md": _plain(lambda s: samples.make_text(f"# {s.ja}\n\n- {s.en}\n- {s.token}\n"), "text/markdown"),
    "scan_png": lambda s: Document(
        samples.make_scan_png(
            ["受領書", f"No. {s.rng.randint(100, 999)}-{s.token[-4:]}", "株式会社サンプル 御中"], dpi=110
        ),
        "image/png",
        Expectation(ocr=True),
    ),
    "scan_jpeg": lambda s: Document(
        samples.make_scan_image(["領収書", f"No. {s.token[-5:]}", "お品代として"], dpi=110, fmt="JPEG"),
        "image/jpeg",
        Expectation(ocr=True),
    ),
    "scan_tiff": lambda s: Document(
        samples.make_scan_tiff([["注文書", f"注文番号 {s.token[-6:]}"], ["納品書", "二枚目のページ"]], dpi=110),
        "image/tiff",
        Expectation(ocr=True),
    ),
    "scan_pdf": lambda s: Document(
        samples.make_scan_pdf([["業務委託契約書", f"契約番号 {s.token[-6:]}"]], dpi=110),
        "application/pdf",
        Expectation(ocr=True),
    ),
    "large_text": _large_text,
    "corrupt_pdf": lambda s: Document(
        samples.make_corrupt_pdf("garbage") + s.token.encode(), "application/pdf", Expectation(error="corrupt")
    ),
    "encrypted_pdf": lambda s: Document(
        samples.make_encrypted_pdf([s.text]), "application/pdf", Expectation(error="encrypted")
    ),
    "zip_bomb_docx": _zip_bomb("docx"),
    "zip_bomb_xlsx": _zip_bomb("xlsx"),
    "empty": lambda s: Document(b"", "text/plain", Expectation(error="empty")),
    # A DOCX uploaded as image/jpeg: the type is detected from the bytes.
    "lying_type": _plain(lambda s: samples.make_docx([s.ja, f"管理番号 {s.token}"]), "image/jpeg"),
}


def make_document(kind: str, token: str, rng: random.Random, *, large_bytes: int) -> Document:
    """One document of ``kind`` carrying ``token`` (unique bytes for a unique token)."""
    return _BUILDERS[kind](_Seed(token, rng.choice(JA_LINES), rng.choice(EN_LINES), rng, large_bytes))


@dataclass
class ObjectState:
    key: str
    sequenced: bool
    present: bool = False
    kind: str = ""
    expect: Expectation = field(default_factory=Expectation)
    etag: str | None = None
    versions: int = 0
    # The current version's bytes: a sync task re-uploads them unchanged.
    data: bytes = b""
    content_type: str = ""
    doomed: bool = False  # a delete is scheduled (``flash``): no other operation picks it meanwhile
    # Which release's pipeline the current version was written for (``Workload.era``): a version the
    # previous release may have read has its cached result under an older extractor version.
    era: str = "current"


@dataclass
class ResyncPlan:
    """The last phase's operations on complete documents (``Workload.resync_phase``)."""

    resynced: list[str] = field(default_factory=list)  # re-uploaded with the same bytes
    copied: list[tuple[str, str]] = field(default_factory=list)  # (source, copy), the source stays
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (old key, new key)

    @property
    def new_keys(self) -> list[str]:
        return [target for _, target in (*self.copied, *self.renamed)]


@dataclass
class WorkloadStats:
    operations: dict[str, int] = field(default_factory=dict)
    changes: int = 0
    created: int = 0
    removed: int = 0

    def op(self, name: str) -> None:
        self.operations[name] = self.operations.get(name, 0) + 1


class Workload:
    """The bucket as the user changes it; ``emit`` receives each change's notification data."""

    def __init__(
        self,
        *,
        s3: Any,
        bucket: str,
        seed: int,
        emit: Callable[[Change], None],
        sequenced_share: float = 0.5,
        large_bytes: int = 300_000,
        was_read: Callable[[str], bool] | None = None,
    ) -> None:
        self.s3 = s3
        self.bucket = bucket
        self.seed = seed
        self.emit = emit
        self.rng = random.Random(f"{seed}:workload")  # noqa: S311  # workload shape, not crypto  # nosec B311
        self.sequenced_share = sequenced_share
        self.large_bytes = large_bytes
        self.objects: dict[str, ObjectState] = {}
        self.stats = WorkloadStats()
        self._serial = 0
        self._sequencer = 0
        self._tokens = 0
        self._last_change: dict[str, float] = {}
        self._deferred: list[tuple[float, str]] = []  # (latest time, key): deletes due later (``flash``)
        # Whether the indexer has read a key's object (the harness's proxy counts GetObject requests).
        self.was_read = was_read or (lambda key: True)
        self.storm_odds = dict(self.STORM)
        # "previous" while the soak's rolling upgrade may let the previous release read what is written.
        self.era = "current"
        self._kinds = list(KINDS)
        self._weights = [KINDS[k][0] for k in self._kinds]

    def weigh_kinds(self, weights: dict[str, float]) -> None:
        """Change the odds of some kinds of new document (``KINDS``' weights stay for the others)."""
        self._weights = [weights.get(kind, KINDS[kind][0]) for kind in self._kinds]

    # -- names and identities

    def _new_key(self, kind: str, folder: str | None = None) -> str:
        self._serial += 1
        folder = folder or self.rng.choice(FOLDERS)
        stem = self.rng.choice(STEMS)
        return f"{folder}/{stem} {self._serial:05d}.{KINDS[kind][1]}"

    def _token(self) -> str:
        self._tokens += 1
        return f"SOAK{self.seed}T{self._tokens:06d}Z"

    def _next_sequencer(self) -> str:
        self._sequencer += 1
        value = f"{self._sequencer:016X}00"
        # Real sequencers vary in length; S3 compares them right-padded with zeros.
        return value.rstrip("0") if self.rng.random() < 0.3 else value

    def _state(self, key: str) -> ObjectState:
        state = self.objects.get(key)
        if state is None:
            state = ObjectState(key, sequenced=self.rng.random() < self.sequenced_share)
            self.objects[key] = state
        return state

    def _change(
        self, state: ObjectState, *, created: bool, how: str, size: int | None = None, when: datetime | None = None
    ) -> Change:
        change = Change(
            bucket=self.bucket,
            key=state.key,
            created=created,
            when=when or datetime.now(UTC),
            sequencer=self._next_sequencer() if state.sequenced else None,
            etag=state.etag if created else None,
            size=size,
            how=how,
        )
        self.stats.changes += 1
        if created:
            self.stats.created += 1
        else:
            self.stats.removed += 1
        return change

    def _space(self, state: ObjectState) -> None:
        """Keep changes of one key without a sequencer at least 2 ms apart (their only order)."""
        if state.sequenced:
            return
        last = self._last_change.get(state.key)
        if last is not None:
            wait = last + 0.0025 - time.monotonic()
            if wait > 0:
                time.sleep(wait)

    def _mark(self, state: ObjectState) -> None:
        if not state.sequenced:
            self._last_change[state.key] = time.monotonic()

    # -- S3 operations (each emits its change)

    def put(self, key: str, kind: str | None = None, *, when: datetime | None = None) -> None:
        """Upload a new version; ``when``: the event time to announce (default: now, 2 ms after the last)."""
        state = self._state(key)
        kind = kind or self.rng.choices(self._kinds, self._weights)[0]
        doc = make_document(kind, self._token(), self.rng, large_bytes=self.large_bytes)
        if when is None:
            self._space(state)
        response = self.s3.put_object(Bucket=self.bucket, Key=key, Body=doc.data, ContentType=doc.content_type)
        state.present, state.kind, state.expect, state.versions = True, kind, doc.expect, state.versions + 1
        state.etag = str(response["ETag"]).strip('"')
        state.data, state.content_type, state.era = doc.data, doc.content_type, self.era
        change = self._change(state, created=True, how="Put", size=len(doc.data), when=when)
        self._mark(state)
        self.emit(change)

    def delete(self, key: str) -> None:
        state = self._state(key)
        self._space(state)
        self.s3.delete_object(Bucket=self.bucket, Key=key)
        state.present, state.etag = False, None
        change = self._change(state, created=False, how="Delete")
        self._mark(state)
        self.emit(change)

    def copy(self, source: str, target: str) -> None:
        src = self.objects[source]
        state = self._state(target)
        self._space(state)
        response = self.s3.copy_object(
            Bucket=self.bucket, Key=target, CopySource={"Bucket": self.bucket, "Key": source}
        )
        state.present, state.kind, state.expect, state.versions = True, src.kind, src.expect, state.versions + 1
        state.etag = str(response["CopyObjectResult"]["ETag"]).strip('"')
        state.data, state.content_type, state.era = src.data, src.content_type, src.era
        head = self.s3.head_object(Bucket=self.bucket, Key=target)
        change = self._change(state, created=True, how="Copy", size=int(head["ContentLength"]))
        self._mark(state)
        self.emit(change)

    def resync(self, key: str) -> None:
        """Upload the object's current bytes again (a sync task re-run): a new version, the same ETag."""
        state = self.objects[key]
        self._space(state)
        response = self.s3.put_object(Bucket=self.bucket, Key=key, Body=state.data, ContentType=state.content_type)
        etag = str(response["ETag"]).strip('"')
        if etag != state.etag:
            raise AssertionError(f"re-uploading the same bytes of {key} changed its ETag")  # the model is wrong
        state.versions += 1
        change = self._change(state, created=True, how="Put", size=len(state.data))
        self._mark(state)
        self.emit(change)

    # -- the phases

    def initial_load(self, documents: int, *, milestones: dict[int, Callable[[], None]] | None = None) -> None:
        """``documents`` new objects of every kind; ``milestones``: called before the n-th upload."""
        for n in range(documents):
            if milestones and n in milestones:
                milestones[n]()
            kind = self.rng.choices(self._kinds, self._weights)[0]
            self.stats.op("create")
            self.put(self._new_key(kind), kind)

    def present_keys(self) -> list[str]:
        return [k for k, s in self.objects.items() if s.present and not s.doomed]

    def _run_due(self, *, all_of_them: bool = False) -> None:
        """Delete the doomed objects the indexer has read (or waited for long enough).

        ``all_of_them``: at the end of the storm, wait until each is due.
        """
        while self._deferred:
            due = [(latest, key) for latest, key in self._deferred if self.was_read(key) or latest <= time.monotonic()]
            if not due and not all_of_them:
                return
            if not due:
                time.sleep(0.05)
                continue
            for entry in due:
                self._deferred.remove(entry)
                self.objects[entry[1]].doomed = False
                self.delete(entry[1])

    # Storm operations and their odds.
    STORM: ClassVar[dict[str, int]] = {
        "overwrite": 34,
        "delete": 12,
        "recreate": 12,
        "rename": 12,
        "burst": 12,
        "create": 10,
        "delete_recreate": 8,
        "resync": 8,
        "copy": 6,
        "flash": 5,
        "same_instant": 4,
    }

    def storm(
        self,
        operations: int,
        *,
        halfway: Callable[[], None] | None = None,
        three_quarters: Callable[[], None] | None = None,
    ) -> None:
        """Overwrites, deletes, re-creates, renames and bursts on the existing keys."""
        names, odds = list(self.storm_odds), list(self.storm_odds.values())
        for n in range(operations):
            self._run_due()
            if halfway is not None and n == operations // 2:
                halfway()
            if three_quarters is not None and n == 3 * operations // 4:
                three_quarters()
            present = self.present_keys()
            deleted = [k for k, s in self.objects.items() if not s.present]
            op = self.rng.choices(names, odds)[0]
            if (op == "recreate" and not deleted) or (op not in ("create", "recreate") and not present):
                op = "create"
            self.stats.op(op)
            if op == "recreate":
                self.put(self.rng.choice(deleted), self.rng.choice(EDIT_KINDS))
            elif op == "create":
                kind = self.rng.choices(self._kinds, self._weights)[0]
                self.put(self._new_key(kind), kind)
            else:
                getattr(self, f"_storm_{op}")(self.rng.choice(present))
        self._run_due(all_of_them=True)

    def _storm_overwrite(self, key: str) -> None:
        self.put(key, self.rng.choice(EDIT_KINDS))

    def _storm_delete(self, key: str) -> None:
        self.delete(key)

    def _storm_rename(self, source: str) -> None:
        """Copy to a new key, then delete the old one (what a rename is on S3)."""
        target = self._free_key(source, "改名 renamed")
        self.copy(source, target)
        self.delete(source)

    def _storm_flash(self, key: str) -> None:
        """A file deleted as soon as the indexer has read it (at most 10 s after its upload).

        That is the interleaving a delayed write must survive: the create is
        claimed and its object read, its write is held (slow extraction,
        back-off, a paused process), the delete is claimed and applied.
        """
        kind = self.rng.choice(EDIT_KINDS)
        target = self._new_key(kind, f"{key.rpartition('/')[0]}/{RACE_FOLDER}")
        self.put(target, kind)
        self.objects[target].doomed = True
        self._deferred.append((time.monotonic() + 10.0, target))

    def _storm_same_instant(self, key: str) -> None:
        """Two versions of a key without sequencers announced with the same millisecond."""
        kind = self.rng.choice(EDIT_KINDS)
        target = self._new_key(kind, key.rpartition("/")[0])
        self.objects[target] = ObjectState(target, sequenced=False)
        when = datetime.now(UTC)
        self.put(target, kind, when=when)
        self.put(target, self.rng.choice(EDIT_KINDS), when=when)

    def _storm_resync(self, key: str) -> None:
        self.resync(key)

    def _storm_copy(self, source: str) -> None:
        """A user copies a file into another folder; the original stays."""
        self.copy(source, self._free_key(source, "コピー copies"))

    def _free_key(self, source: str, subfolder: str) -> str:
        folder, _, name = source.rpartition("/")
        target = f"{folder}/{subfolder}/{name}"
        if target in self.objects and self.objects[target].present:
            target = self._new_key(self.objects[source].kind, f"{folder}/{subfolder}")
        return target

    def race_phase(self, files: int) -> None:
        """``files`` short-lived files on a quiet pipeline: each deleted as soon as the indexer has read it."""
        present = sorted(self.present_keys())
        for key in self.rng.sample(present, min(files, len(present))):
            self.stats.op("final_flash")
            self._storm_flash(key)
        self._run_due(all_of_them=True)

    def resync_phase(self, objects: int) -> ResyncPlan:
        """After the drain, on complete documents: ``objects`` re-uploads, copies and renames each.

        What the judge then checks (``judge.check_resync``): no re-upload read its
        body, and every copy and rename was indexed from the content cache (no
        extraction, no OCR job). Copies and renames are taken among the files
        the indexer reads itself (a file above MAX_OBJECT_BYTES goes to the
        worker whatever the cache holds), whose content extracts, and which the current release
        read (not only the previous one, in a rolling upgrade). A file may
        be both re-uploaded and then renamed: its delete is then newer than the
        re-upload, which may be skipped as stale if the delete arrives first.
        """
        plan = ResyncPlan()
        present = sorted(self.present_keys())
        for key in self.rng.sample(present, min(objects, len(present))):
            self.stats.op("final_resync")
            self.resync(key)
            plan.resynced.append(key)
        # Whose content the current release has read: a result the previous release cached (an older
        # extractor version) is not the current one's to reuse.
        movable = [
            key
            for key in present
            if self.objects[key].expect.error is None
            and self.objects[key].kind != "large_text"
            and self.objects[key].era == "current"
        ]
        picks = self.rng.sample(movable, min(2 * objects, len(movable)))
        for source in picks[:objects]:
            self.stats.op("final_copy")
            target = self._free_key(source, "再同期 copies")
            self.copy(source, target)
            plan.copied.append((source, target))
        for source in picks[objects:]:
            self.stats.op("final_rename")
            target = self._free_key(source, "移動済み moved")
            self.copy(source, target)
            self.delete(source)
            plan.renamed.append((source, target))
        return plan

    def _storm_burst(self, key: str) -> None:
        """Several overwrites in a row (an editor saving), sometimes ending in a delete."""
        for _ in range(self.rng.randint(2, 4)):
            self.put(key, self.rng.choice(EDIT_KINDS))
        if self.rng.random() < 0.4:
            self.delete(key)

    def _storm_delete_recreate(self, key: str) -> None:
        self.delete(key)
        self.put(key, self.rng.choice(EDIT_KINDS))

    def expected(self) -> dict[str, ObjectState]:
        """The objects that exist at the end, by key."""
        return {k: s for k, s in self.objects.items() if s.present}
