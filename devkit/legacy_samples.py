"""Legacy-format samples: the real-application corpus under tests/fixtures/real, and mail builders.

The Word, PowerPoint, RTF and ODF fixtures were written once by LibreOffice
from the flat ODF sources next to them and are checked in (LibreOffice is a
development tool, not a test dependency). ``python -m devkit.legacy_samples``
writes them again when ``soffice`` is installed
(``apt-get install libreoffice-writer libreoffice-impress libreoffice-calc``).

The mail builders use the standard library's ``email`` package, the way a
Japanese mailer encodes: ISO-2022-JP (JIS) for the classic case, Shift_JIS
labelled parts holding CP932 characters for Windows mailers, and a saved
web page (``.mht``, multipart/related).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tempfile
import zipfile
from email.header import Header
from email.mime.application import MIMEApplication
from email.mime.image import MIMEImage
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.utils import formatdate
from pathlib import Path

REAL = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "real"
TIKA = REAL / "apache-tika"

# (source, target format for soffice --convert-to, output name)
_CONVERSIONS = (
    ("ringi.fodt", "doc", "ringi.doc"),
    ("ringi.fodt", "rtf", "ringi.rtf"),
    ("ringi.fodt", "odt", "ringi.odt"),
    ("gijiroku.fodp", "ppt", "gijiroku.ppt"),
    ("gijiroku.fodp", "odp", "gijiroku.odp"),
)


def real(name: str) -> bytes:
    """The bytes of one checked-in fixture (``apache-tika/...`` for the Tika test files)."""
    return (REAL / name).read_bytes()


def make_mail_iso2022jp(attachment: tuple[str, bytes] | None = None) -> bytes:
    """A plain-text mail in ISO-2022-JP with encoded-word headers, optionally with an attachment."""
    message = MIMEMultipart()
    message["Subject"] = Header("【重要】来週の打ち合わせ日程について", "iso-2022-jp").encode()
    message["From"] = Header("山田 太郎", "iso-2022-jp").encode() + " <yamada@example.co.jp>"
    message["To"] = Header("佐藤 花子", "iso-2022-jp").encode() + " <sato@example.co.jp>"
    message["Date"] = formatdate(1700000000, localtime=False)
    body = (
        "佐藤様\n\nお世話になっております。来週の打ち合わせは水曜日の午後二時からでお願いします。\n"
        "議事録は添付の文書をご覧ください。\n"
    )
    message.attach(MIMEText(body, "plain", "iso-2022-jp"))
    if attachment is not None:
        name, data = attachment
        part = MIMEApplication(data)
        part.add_header("Content-Disposition", "attachment", filename=("iso-2022-jp", "", name))
        message.attach(part)
    return message.as_bytes()


def make_mail_shift_jis_html() -> bytes:
    """An HTML mail labelled Shift_JIS holding CP932 characters (①, 髙), subject as Shift_JIS encoded words."""
    message = MIMEMultipart("alternative")
    subject = "①髙橋さんへ：見積書の件"
    import base64

    message["Subject"] = "=?Shift_JIS?B?" + base64.b64encode(subject.encode("cp932")).decode("ascii") + "?="
    message["From"] = "takahashi@example.co.jp"
    message["To"] = "sales@example.co.jp"
    message["Date"] = formatdate(1700000000, localtime=False)
    html = (
        "<html><body><p>髙橋様</p><p>①見積書を<b>送付</b>いたします。</p>"
        "<script>var x='隠しスクリプト';</script></body></html>"
    )
    part = MIMEText("", "html", "utf-8")
    part.set_payload(html.encode("cp932"))
    part.replace_header("Content-Type", 'text/html; charset="shift_jis"')
    del part["Content-Transfer-Encoding"]
    from email import encoders

    encoders.encode_base64(part)
    message.attach(part)
    return message.as_bytes()


def make_mht() -> bytes:
    """A web page saved as a single file (.mht): multipart/related, the HTML root and a picture."""
    message = MIMEMultipart("related", type="text/html")
    message["From"] = "<Saved by Blink>"
    message["Subject"] = "社内ポータル お知らせ"
    message["Date"] = formatdate(1700000000, localtime=False)
    message["MIME-Version"] = "1.0"
    page = MIMEText(
        "<html><head><title>お知らせ</title></head><body><h1>年末年始の休業日</h1>"
        "<p>十二月二十九日から一月三日まで休業します。</p><img src='logo.png'></body></html>",
        "html",
        "utf-8",
    )
    page["Content-Location"] = "https://intra.example.co.jp/news.html"
    message.attach(page)
    image = MIMEImage(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32, "png")
    image["Content-Location"] = "https://intra.example.co.jp/logo.png"
    message.attach(image)
    return message.as_bytes()


def make_cp932_zip(members: dict[str, bytes]) -> bytes:
    """A zip whose member names are CP932 bytes without the UTF-8 flag (Explorer on Japanese Windows)."""
    placeholders = {}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for index, (name, data) in enumerate(members.items()):
            raw = name.encode("cp932")
            placeholder = f"{index:04d}".encode().ljust(len(raw), b"_")
            if len(placeholder) != len(raw):
                raise ValueError(f"name {name!r} too short for a placeholder")
            placeholders[placeholder] = raw
            archive.writestr(placeholder.decode("ascii"), data)
    out = buffer.getvalue()
    for placeholder, raw in placeholders.items():
        out = out.replace(placeholder, raw)  # local header and central directory
    return out


def regenerate(soffice: str = "soffice") -> list[Path]:
    """Write the LibreOffice fixtures again from their flat ODF sources; the paths written."""
    if shutil.which(soffice) is None:
        raise SystemExit(f"{soffice} not found: apt-get install libreoffice-writer libreoffice-impress")
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        for source, target, name in _CONVERSIONS:
            subprocess.run(  # noqa: S603 - a developer's own soffice on the checked-in sources
                [soffice, "--headless", "--convert-to", target, "--outdir", tmp, str(REAL / source)],
                check=True,
                capture_output=True,
                timeout=300,
            )
            produced = Path(tmp) / (Path(source).stem + "." + target)
            shutil.copyfile(produced, REAL / name)
            written.append(REAL / name)
    (REAL / "uchiawase.eml").write_bytes(make_mail_iso2022jp(("稟議書.doc", real("ringi.doc"))))
    written.append(REAL / "uchiawase.eml")
    return written


if __name__ == "__main__":
    for path in regenerate(*sys.argv[1:]):
        print(path)
