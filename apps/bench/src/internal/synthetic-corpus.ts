// Deterministic synthetic corpora for the memory bench: sentences whose words follow a Zipf
// distribution over a vocabulary (real English words at the top ranks, pronounceable made-up words
// in the long tail), 10 to 40 words each, with a share of entries in French, Spanish, German,
// Russian, Greek, Chinese and Japanese. Same seed, same corpus, on every machine.

/** One generated entry: `words` are the words its text was built from (queries draw from them). */
export interface CorpusEntry {
  readonly id: string;
  readonly text: string;
  readonly language: Language;
  readonly words: readonly string[];
}

/** One generated query: 1 to 3 words of the entry `from`. */
export interface CorpusQuery {
  readonly text: string;
  readonly language: Language;
  readonly from: string;
}

export type Language = "en" | "fr" | "es" | "de" | "ru" | "el" | "zh" | "ja";

/** A small, fast, seedable PRNG (mulberry32): returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Draws ranks 0..n-1 with probability proportional to 1 / (rank + 1)^exponent. */
function zipfSampler(n: number, exponent: number): (random: () => number) => number {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let rank = 0; rank < n; rank++) {
    total += 1 / (rank + 1) ** exponent;
    cdf[rank] = total;
  }
  return (random) => {
    const target = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

// The most frequent English words, in rough frequency order; never used as query terms.
const ENGLISH_FUNCTION_WORDS = (
  "the of and to a in is that for it on was with as be at by this have from or an are not but " +
  "they we you he she his her their our will would can could has had been were which there what " +
  "all if so when about into then than them its also more some only"
).split(" ");

const ENGLISH_CONTENT_WORDS = (
  "user team project meeting report task error file system network key password city street house " +
  "book time work week letter answer question language model version setting database order weather " +
  "memory search deploy test release customer server client request response cache queue worker " +
  "schedule budget invoice payment account contract invoice travel flight hotel train ticket airport " +
  "coffee lunch dinner breakfast morning evening night holiday birthday garden kitchen window door " +
  "office desk laptop phone screen keyboard printer camera battery charger cable router backup disk " +
  "cluster container image registry pipeline build commit branch merge review ticket incident outage " +
  "alert metric dashboard latency throughput timeout retry token session agent tool provider prompt " +
  "summary draft document spreadsheet slide chart table column row index query filter sort page " +
  "price discount product catalog warehouse shipment delivery supplier vendor partner manager " +
  "engineer designer analyst doctor teacher student parent child friend neighbour colleague " +
  "prefer like need want remember forget check update create delete send receive share open close " +
  "start stop finish plan move change fix test write read call email visit book cancel confirm " +
  "quick slow large small early late important urgent weekly daily monthly quarterly annual new old " +
  "red blue green yellow black white warm cold sunny rainy windy quiet busy free open private public " +
  "monday tuesday wednesday thursday friday saturday sunday january february march april may june " +
  "july august september october november december spring summer autumn winter river mountain lake " +
  "forest beach island bridge tower museum library hospital school university station market park " +
  "bicycle car bus truck boat plane road highway map route distance kilometre mile hour minute second " +
  "vegetarian vegan allergy peanut gluten dairy recipe soup salad pasta rice bread cheese apple orange " +
  "music film novel podcast concert theatre painting photo football tennis running swimming yoga chess"
).split(" ");

/** Pronounceable made-up words for the long tail of the vocabulary, unique and deterministic. */
function madeUpWords(count: number, random: () => number, taken: Set<string>): string[] {
  const onsets = "b c d f g h j k l m n p r s t v w z br cl dr fl gr kr pl pr sk sl sp st tr sh ch th".split(
    " ",
  );
  const vowels = "a e i o u ai ea ou io y".split(" ");
  const codas = ["", "", "", "n", "r", "s", "l", "t", "m", "nd", "st", "rk", "x"];
  const pick = (list: readonly string[]) => list[Math.floor(random() * list.length)]!;
  const out: string[] = [];
  while (out.length < count) {
    const syllables = 2 + Math.floor(random() * 3);
    let word = "";
    for (let i = 0; i < syllables; i++)
      word += pick(onsets) + pick(vowels) + (i === syllables - 1 ? pick(codas) : "");
    if (taken.has(word)) continue;
    taken.add(word);
    out.push(word);
  }
  return out;
}

interface ForeignLanguage {
  readonly language: Exclude<Language, "en">;
  /** Share of all entries. */
  readonly share: number;
  /** Words joined without spaces (Chinese, Japanese). */
  readonly unspaced: boolean;
  /** How many leading words are function words (never query terms). */
  readonly functionWords: number;
  readonly words: readonly string[];
}

const FOREIGN: readonly ForeignLanguage[] = [
  {
    language: "fr",
    share: 0.015,
    unspaced: false,
    functionWords: 10,
    words: (
      "le la les de des et un une pour avec équipe réunion déploiement données sécurité télécharger mémoire " +
      "société événement élève café hôpital forêt fenêtre château très déjà après première dernière créer " +
      "préférer réponse problème système réseau serveur fichier répertoire clé numéro téléphone journée été " +
      "hiver français génération modèle itinéraire aéroport réservation hôtel numérique électricité rivière " +
      "bibliothèque congé fête anniversaire boîte goût pâtes crème"
    ).split(" "),
  },
  {
    language: "es",
    share: 0.015,
    unspaced: false,
    functionWords: 7,
    words: (
      "el la los de y en para año niño mañana señal contraseña acción configuración información reunión " +
      "aplicación búsqueda página número teléfono dirección canción corazón árbol café lápiz médico música " +
      "rápido público también después según último próximo diseño pequeño compañía español montaña ciudad " +
      "cumpleaños almacén envío pedido factura lección jardín autobús avión"
    ).split(" "),
  },
  {
    language: "de",
    share: 0.015,
    unspaced: false,
    functionWords: 6,
    words: (
      "der die das und mit für über schön größe straße grün mädchen bücher käse schlüssel gebäude " +
      "übersetzung prüfung lösung änderung führung zuverlässig fußball weiß äpfel öffnen später früh glück " +
      "häuser tür gemüse frühstück übung verfügbar benutzer speicher datenbank sicherung einstellung " +
      "rechnung bestellung lieferung geschäftsführer gespräch kündigung"
    ).split(" "),
  },
  {
    language: "ru",
    share: 0.015,
    unspaced: false,
    functionWords: 8,
    words: (
      "и в на с для не что это память поиск данные сервер пользователь команда проект встреча отчёт задача " +
      "ошибка файл система сеть ключ пароль город улица дом книга время работа неделя письмо ответ вопрос " +
      "язык модель сборка тест релиз версия настройка база запрос счёт заказ доставка погода зима лето " +
      "москва кофе"
    ).split(" "),
  },
  {
    language: "el",
    share: 0.01,
    unspaced: false,
    functionWords: 8,
    words: (
      "και το η ο για με σε δεν μνήμη αναζήτηση δεδομένα διακομιστής χρήστης ομάδα έργο συνάντηση αναφορά " +
      "εργασία σφάλμα αρχείο σύστημα δίκτυο κλειδί κωδικός πόλη δρόμος σπίτι βιβλίο χρόνος δουλειά " +
      "εβδομάδα γράμμα απάντηση ερώτηση γλώσσα μοντέλο έκδοση ρύθμιση βάση παραγγελία καιρός θάλασσα ήλιος " +
      "νερό φίλος αθήνα"
    ).split(" "),
  },
  {
    language: "zh",
    share: 0.015,
    unspaced: true,
    functionWords: 5,
    words: (
      "的 了 是 在 和 数据 服务器 用户 团队 项目 会议 报告 任务 错误 文件 系统 网络 密钥 密码 城市 街道 房子 书 " +
      "时间 工作 星期 信 回答 问题 语言 模型 版本 设置 数据库 订单 天气 记忆 搜索 部署 测试 发布 客户 北京 上海 " +
      "咖啡 喜欢 需要 明天 昨天 下午"
    ).split(" "),
  },
  {
    language: "ja",
    share: 0.015,
    unspaced: true,
    functionWords: 7,
    words: (
      "の は を に が と で データ サーバー ユーザー チーム プロジェクト 会議 報告書 タスク エラー ファイル " +
      "システム ネットワーク 鍵 パスワード 東京 大阪 駅 家 本 時間 仕事 週末 手紙 返事 質問 言語 モデル " +
      "バージョン 設定 注文 天気 記憶 検索 テスト リリース お客様 コーヒー 好き 明日 昨日 午後 します ました"
    ).split(" "),
  },
];

/** Vocabulary size of the English part (function words, real content words, made-up words). */
export const ENGLISH_VOCABULARY = 50_000;
/** The Zipf exponent of every language's word distribution. */
export const ZIPF_EXPONENT = 1.0;

export interface SyntheticCorpus {
  readonly entries: readonly CorpusEntry[];
  /** Keyword queries: 1 to 3 content words of an entry. */
  readonly queries: readonly CorpusQuery[];
  /** Queries as agents send them: a whole sentence (the last user message) around 2 to 4 content words of an entry. */
  readonly sentences: readonly CorpusQuery[];
  /** Entries per language. */
  readonly languages: Readonly<Record<Language, number>>;
  readonly tokens: number;
}

/**
 * `size` entries and `queries` queries, the same for the same arguments. Query terms are 1 to 3
 * distinct words of a random entry, function words excluded (people search for content words).
 */
export function syntheticCorpus(size: number, queryCount: number, seed = 20_240_611): SyntheticCorpus {
  const vocabularyRandom = prng(seed);
  const english = [...ENGLISH_FUNCTION_WORDS, ...new Set(ENGLISH_CONTENT_WORDS)];
  english.push(...madeUpWords(ENGLISH_VOCABULARY - english.length, vocabularyRandom, new Set(english)));
  const englishFunction = new Set(ENGLISH_FUNCTION_WORDS);
  const englishRank = zipfSampler(english.length, ZIPF_EXPONENT);
  const foreignRank = FOREIGN.map((f) => zipfSampler(f.words.length, ZIPF_EXPONENT));

  const random = prng(seed + 1);
  const entries: CorpusEntry[] = [];
  const languages = { en: 0, fr: 0, es: 0, de: 0, ru: 0, el: 0, zh: 0, ja: 0 };
  let tokens = 0;
  for (let i = 0; i < size; i++) {
    const length = 10 + Math.floor(random() * 31);
    let roll = random();
    const foreign = FOREIGN.findIndex((f) => {
      roll -= f.share;
      return roll < 0;
    });
    const words: string[] = [];
    let text: string;
    let language: Language;
    if (foreign < 0) {
      language = "en";
      for (let w = 0; w < length; w++) words.push(english[englishRank(random)]!);
      text = words.map((w, j) => (j > 0 && j < length - 1 && random() < 0.06 ? `${w},` : w)).join(" ");
      text = `${text[0]!.toUpperCase()}${text.slice(1)}.`;
    } else {
      const f = FOREIGN[foreign]!;
      language = f.language;
      for (let w = 0; w < length; w++) words.push(f.words[foreignRank[foreign]!(random)]!);
      text = f.unspaced ? `${words.join("")}。` : `${words.join(" ")}.`;
    }
    languages[language]++;
    tokens += length;
    entries.push({ id: `e${i}`, text, language, words });
  }

  const queryRandom = prng(seed + 2);
  const queries: CorpusQuery[] = [];
  while (queries.length < queryCount) {
    const entry = entries[Math.floor(queryRandom() * entries.length)]!;
    const f = FOREIGN.find((l) => l.language === entry.language);
    const isFunction = f
      ? (w: string) => f.words.indexOf(w) < f.functionWords
      : (w: string) => englishFunction.has(w);
    const candidates = [...new Set(entry.words.filter((w) => !isFunction(w)))];
    const terms = Math.min(candidates.length, 1 + Math.floor(queryRandom() * 3));
    if (terms === 0) continue;
    const chosen: string[] = [];
    while (chosen.length < terms) {
      const word = candidates[Math.floor(queryRandom() * candidates.length)]!;
      if (!chosen.includes(word)) chosen.push(word);
    }
    queries.push({ text: chosen.join(" "), language: entry.language, from: entry.id });
  }
  const sentences = sentenceQueries(entries, english, englishFunction, queryCount, prng(seed + 3));
  return { entries, queries, sentences, languages, tokens };
}

// Question frames of English agent turns; `_` marks where content words of the entry go.
const FRAMES = [
  "can you remind me what we decided about the _ for the _ last week",
  "what did I tell you about _ and _ when we talked about the _",
  "please look up the _ we discussed and tell me if the _ changed",
  "do you remember which _ I prefer for _ and why",
  "I need the details of the _ again, especially the _ and the _",
  "before we start, what is the status of the _ with the _",
  "could you check whether the _ is still _ for this week",
  "what was the name of the _ that handles our _ again",
];

/**
 * Whole-sentence queries, as an agent recalls with the last user message: an English frame (or,
 * for other languages, a run of that language's most frequent words) around 2 to 4 distinct
 * content words of a random entry, so most query words are common ones that match many entries.
 */
function sentenceQueries(
  entries: readonly CorpusEntry[],
  english: readonly string[],
  englishFunction: ReadonlySet<string>,
  count: number,
  random: () => number,
): CorpusQuery[] {
  const out: CorpusQuery[] = [];
  while (out.length < count) {
    const entry = entries[Math.floor(random() * entries.length)]!;
    const f = FOREIGN.find((l) => l.language === entry.language);
    const isFunction = f
      ? (w: string) => f.words.indexOf(w) < f.functionWords
      : (w: string) => englishFunction.has(w);
    const candidates = [...new Set(entry.words.filter((w) => !isFunction(w)))];
    if (candidates.length < 2) continue;
    const wanted = Math.min(candidates.length, 2 + Math.floor(random() * 3));
    const chosen: string[] = [];
    while (chosen.length < wanted) {
      const word = candidates[Math.floor(random() * candidates.length)]!;
      if (!chosen.includes(word)) chosen.push(word);
    }
    let text: string;
    if (f === undefined) {
      const frame = FRAMES[Math.floor(random() * FRAMES.length)]!;
      let next = 0;
      // Slots beyond the chosen words get a frequent English content word, as people write.
      text = frame.replace(
        /_/g,
        () => chosen[next++] ?? english[ENGLISH_FUNCTION_WORDS.length + Math.floor(random() * 40)]!,
      );
      for (; next < chosen.length; next++) text += ` ${chosen[next]}`;
      text = `${text[0]!.toUpperCase()}${text.slice(1)}?`;
    } else {
      const filler = f.words.slice(0, f.functionWords);
      const words: string[] = [];
      for (const word of chosen) {
        words.push(filler[Math.floor(random() * filler.length)]!, word);
        if (random() < 0.5) words.push(filler[Math.floor(random() * filler.length)]!);
      }
      text = f.unspaced ? `${words.join("")}？` : `${words.join(" ")}?`;
    }
    out.push({ text, language: entry.language, from: entry.id });
  }
  return out;
}
