"""Questions no file answers, and a second corpus of other office topics: what the vector leg must not answer.

Used by ``bench.meaning`` (``make bench``) only — never by the tests — to choose when a file found by
meaning alone is offered (``docindex.index.hybrid.MeaningRule``, docs/meaning-search.md):

- ``UNANSWERED``: 32 questions employees might type that none of ``bench.meaning_corpus``'s 2,000
  files answers (91 regulations, manuals and notices, and generated minutes, reports, notices,
  quotations and survey results about the same subjects). Some sit next to a subject the corpus
  has (a golf competition beside the entertainment rules' "no golf", the board's minutes beside
  department minutes): the near neighbours an employee must not be shown as answers.
- ``OFFICE_FILES``: a second corpus — a department's folder of twelve files like the ones in the
  issue (leave rules, the security policy, evacuation, energy saving, training, the health check,
  sales, a quotation, a visit record, an order, a trip report, minutes) among generated sales
  reports, quotations, contracts and minutes (``bench.corpus``'s sentences, other topics than the
  first corpus's regulations); ``OFFICE_QUERIES`` ask what those twelve answer, in other words;
  ``OFFICE_UNANSWERED`` (20) what none does, four of them the issue's own; ``OFFICE_NAMES`` are
  names and codes written in the files: keyword searches, to which meaning should add nothing.
"""

from __future__ import annotations

import random

from bench.meaning_corpus import MeaningQuery

UNANSWERED: tuple[str, ...] = (
    "量子コンピュータの導入計画",
    "ゴルフコンペの結果",
    "株主総会の議決権行使",
    "社員旅行の行き先アンケート",
    "新しい本社ビルの設計コンペはいつ",
    "海外子会社を設立する手続き",
    "特許を出願したい",
    "工場の排水の水質検査の結果",
    "社内の卓球大会の日程",
    "中国語の通訳を頼みたい",
    "株価が下がった理由",
    "新卒採用の面接官の心得",
    "社長の年頭挨拶の全文",
    "会社のロゴを使うときの色の指定",
    "ドローンで空撮するときの許可",
    "自動販売機の飲み物を増やしてほしい",
    "社内報に載せる写真の募集",
    "オフィスの観葉植物の水やり当番",
    "屋上に太陽光パネルを設置する計画",
    "取締役会の議事録",
    "M&Aの候補企業の評価",
    "サーバールームの温度管理の基準",
    "競合他社の新製品の価格",
    "海外の展示会に出展する準備",
    "社内の献血の実施日",
    "オフィスの引っ越しの日程",
    "外国人社員のビザの更新",
    "会社の創業者の経歴",
    # names and single words no file holds
    "ブロックチェーン",
    "株主優待",
    "北海道支社",
    "カーボンニュートラル",
)

# (key, text): the department's folder.
OFFICE_FILES: tuple[tuple[str, str], ...] = (
    (
        "総務課/規程/休暇規程.docx",
        "休暇規程\n第1条 年次有給休暇のほか、夏季休暇として7月から9月の間に3日、年末年始休暇として"
        "12月29日から1月3日までを与える。第2条 特別休暇は結婚5日、配偶者の出産2日とする。",
    ),
    (
        "総務課/規程/情報セキュリティポリシー.pdf",
        "情報セキュリティポリシー\n社外への持ち出しは暗号化したノートPCに限る。私物のUSBメモリや外付けディスクは"
        "業務用PCに接続してはならない。パスワードは他人と共有しない。",
    ),
    (
        "総務課/手順/避難訓練の手順.docx",
        "避難訓練の手順\n火災報知器が鳴ったら、放送の指示に従い非常階段で1階へ降りる。集合場所は正門前の駐車場。"
        "各フロアの防火管理者が人数を確認し、本部へ報告する。",
    ),
    (
        "総務課/計画/省エネルギー推進計画.xlsx",
        "省エネルギー推進計画\n夏季の冷房は28度、冬季の暖房は20度を目安に設定する。昼休みは執務室の照明を消す。"
        "退社時はパソコンの電源を切り、電力使用量を前年比5%削減する。",
    ),
    (
        "人事課/研修/新入社員研修計画.pptx",
        "新入社員研修計画\n第1週はビジネスマナー、会社の組織と事業の説明、情報セキュリティ研修。"
        "第2週から各部署での実習を行い、最終日に研修報告会で発表する。",
    ),
    (
        "人事課/案内/定期健康診断の実施について.txt",
        "定期健康診断の実施について\n今年の定期健康診断は10月に本社で行います。当日受診できなかった方は、"
        "11月末までに提携クリニックで受診し、結果を人事課に提出してください。",
    ),
    (
        "営業課/報告/月次売上報告 10月.xlsx",
        "月次売上報告 10月\n10月の売上高は4,820万円で、前年同月比8%の増加。主力製品の受注が好調で、"
        "目標に対する達成率は104%となった。",
    ),
    (
        "営業課/見積/御見積書 サーバー保守.pdf",
        "御見積書\n件名：サーバー保守サービス（年間）\n保守費用 1,200,000円（税別）\n対応時間 平日9時から18時\n"
        "有効期限 発行日より30日",
    ),
    (
        "営業課/記録/顧客訪問記録 山田商事.docx",
        "顧客訪問記録\n訪問先：山田商事 購買部\n先方から来期の発注量を2割増やしたいとの相談があった。"
        "納期の短縮と価格の見直しを次回までに検討する。",
    ),
    (
        "総務課/発注/注文書 事務用品.pdf",
        "注文書\n品名：コピー用紙 A4 数量：20箱\n品名：ボールペン 黒 数量：50本\n納品先：本社総務課",
    ),
    (
        "営業課/報告/出張報告書 大阪.docx",
        "出張報告書\n出張先：大阪支店\n目的：関西地区の販売代理店との打ち合わせ。新製品の販促キャンペーンの"
        "進め方と在庫の配分について合意した。",
    ),
    (
        "営業課/会議/営業会議 議事録.docx",
        "営業会議 議事録\n決定事項：下期の重点顧客を10社に絞る。展示会への出展は見送る。"
        "次回は各担当が訪問計画を報告する。",
    ),
)

OFFICE_QUERIES: tuple[MeaningQuery, ...] = (
    MeaningQuery("夏休みは何日とれる", "総務課/規程/休暇規程.docx", "question"),
    MeaningQuery(
        "自分のUSBメモリを会社のパソコンにさしていい？", "総務課/規程/情報セキュリティポリシー.pdf", "question"
    ),
    MeaningQuery("火事のときはどこに集まる", "総務課/手順/避難訓練の手順.docx", "question"),
    MeaningQuery("エアコンの温度は何度にする", "総務課/計画/省エネルギー推進計画.xlsx", "question"),
    MeaningQuery("新人は最初の週に何をする", "人事課/研修/新入社員研修計画.pptx", "question"),
    MeaningQuery("健診の日に休んでしまった", "人事課/案内/定期健康診断の実施について.txt", "paraphrase"),
    MeaningQuery("先月の売り上げはどうだった", "営業課/報告/月次売上報告 10月.xlsx", "paraphrase"),
    MeaningQuery("サーバーのメンテナンスにいくらかかる", "営業課/見積/御見積書 サーバー保守.pdf", "question"),
    MeaningQuery("山田商事に行ったときの話", "営業課/記録/顧客訪問記録 山田商事.docx", "paraphrase"),
    MeaningQuery("コピー用紙を何箱頼んだ", "総務課/発注/注文書 事務用品.pdf", "question"),
    MeaningQuery("関西の代理店と話した内容", "営業課/報告/出張報告書 大阪.docx", "paraphrase"),
    MeaningQuery("営業の打ち合わせで決まったこと", "営業課/会議/営業会議 議事録.docx", "paraphrase"),
)

OFFICE_UNANSWERED: tuple[str, ...] = (
    # the four
    "量子コンピュータの導入計画",
    "ゴルフコンペの結果",
    "株主総会の議決権行使",
    "社員旅行の行き先アンケート",
    # what the first corpus answers and this one does not
    "社員食堂のメニュー",
    "名刺の作り方",
    "退職金の計算方法",
    "在宅勤務の手当",
    "経費精算の締め日",
    "パスワードを忘れた",
    "育児休業は何か月とれる",
    "テレビ会議の使い方",
    "駐車場の空き状況",
    "ハラスメントの相談窓口",
    # neither corpus
    "会社の創立記念日",
    "社内報の原稿の締め切り",
    "工場見学の申し込み",
    "社内ベンチャー制度に応募したい",
    "保養所の予約",
    "英語のプレゼン資料の添削",
)

# Names and codes the generated files write: the keyword leg answers, meaning should add nothing.
OFFICE_NAMES: tuple[str, ...] = ("福岡県", "山﨑", "複合機", "広島県", "契約更新", "物流委託")


def office_corpus(generated: int = 300, seed: int = 35) -> list[tuple[str, str]]:
    """The twelve files and ``generated`` others of other office topics (sales, quotations,
    contracts, minutes: ``bench.corpus``'s sentences), deterministic."""
    from bench.corpus import _title, sentences

    rng = random.Random(seed)  # noqa: S311 - a reproducible corpus, not cryptography  # nosec B311
    files = list(OFFICE_FILES)
    for n in range(generated):
        title = _title(rng, "ja")
        text = title + "\n" + "".join(sentences(rng, rng.randint(200, 700), "ja"))
        folder = rng.choice(("営業課/報告", "営業課/見積", "総務課/契約", "経理課/予算", "営業課/会議"))
        files.append((f"{folder}/{title} {n:04d}.txt", text))
    return files
