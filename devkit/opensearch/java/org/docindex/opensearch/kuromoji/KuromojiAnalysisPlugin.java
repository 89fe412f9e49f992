/*
 * docindex's local stand-in for OpenSearch's analysis-kuromoji plugin, whose 2.19 jar Maven Central
 * does not serve (org.opensearch.plugin:analysis-kuromoji stops at 2.16.0 and starts again at 3.8.0).
 *
 * It registers the names and settings of analysis-kuromoji as OpenSearch documents them, each on the
 * Lucene class that analysis-kuromoji uses (lucene-analysis-kuromoji, the version OpenSearch 2.19.1
 * ships with), so an index body written for Amazon OpenSearch Service is analysed here by the same
 * Lucene code. Written for docindex from the documentation; no OpenSearch source is copied.
 */
package org.docindex.opensearch.kuromoji;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.StopFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.ja.JapaneseAnalyzer;
import org.apache.lucene.analysis.ja.JapaneseBaseFormFilter;
import org.apache.lucene.analysis.ja.JapaneseCompletionFilter;
import org.apache.lucene.analysis.ja.JapaneseHiraganaUppercaseFilter;
import org.apache.lucene.analysis.ja.JapaneseIterationMarkCharFilter;
import org.apache.lucene.analysis.ja.JapaneseKatakanaStemFilter;
import org.apache.lucene.analysis.ja.JapaneseKatakanaUppercaseFilter;
import org.apache.lucene.analysis.ja.JapaneseNumberFilter;
import org.apache.lucene.analysis.ja.JapanesePartOfSpeechStopFilter;
import org.apache.lucene.analysis.ja.JapaneseReadingFormFilter;
import org.apache.lucene.analysis.ja.JapaneseTokenizer;
import org.apache.lucene.analysis.ja.dict.UserDictionary;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.index.IndexSettings;
import org.opensearch.index.analysis.AbstractCharFilterFactory;
import org.opensearch.index.analysis.AbstractIndexAnalyzerProvider;
import org.opensearch.index.analysis.AbstractTokenFilterFactory;
import org.opensearch.index.analysis.AbstractTokenizerFactory;
import org.opensearch.index.analysis.Analysis;
import org.opensearch.index.analysis.AnalyzerProvider;
import org.opensearch.index.analysis.CharFilterFactory;
import org.opensearch.index.analysis.NormalizingCharFilterFactory;
import org.opensearch.index.analysis.TokenFilterFactory;
import org.opensearch.index.analysis.TokenizerFactory;
import org.opensearch.indices.analysis.AnalysisModule.AnalysisProvider;
import org.opensearch.plugins.AnalysisPlugin;
import org.opensearch.plugins.Plugin;

public class KuromojiAnalysisPlugin extends Plugin implements AnalysisPlugin {

    @Override
    public Map<String, AnalysisProvider<CharFilterFactory>> getCharFilters() {
        return Map.of("kuromoji_iteration_mark", IterationMarkCharFilterFactory::new);
    }

    @Override
    public Map<String, AnalysisProvider<TokenizerFactory>> getTokenizers() {
        return Map.of("kuromoji_tokenizer", KuromojiTokenizerFactory::new);
    }

    @Override
    public Map<String, AnalysisProvider<TokenFilterFactory>> getTokenFilters() {
        Map<String, AnalysisProvider<TokenFilterFactory>> filters = new TreeMap<>();
        filters.put("kuromoji_baseform", (index, env, name, settings) -> new Simple(index, name, settings, JapaneseBaseFormFilter::new));
        filters.put("kuromoji_part_of_speech", PartOfSpeechFactory::new);
        filters.put("kuromoji_readingform", ReadingFormFactory::new);
        filters.put("kuromoji_stemmer", StemmerFactory::new);
        filters.put("ja_stop", StopFactory::new);
        filters.put("kuromoji_number", (index, env, name, settings) -> new Simple(index, name, settings, JapaneseNumberFilter::new));
        filters.put("kuromoji_completion", CompletionFactory::new);
        filters.put(
            "hiragana_uppercase",
            (index, env, name, settings) -> new Simple(index, name, settings, JapaneseHiraganaUppercaseFilter::new)
        );
        filters.put(
            "katakana_uppercase",
            (index, env, name, settings) -> new Simple(index, name, settings, JapaneseKatakanaUppercaseFilter::new)
        );
        return filters;
    }

    @Override
    public Map<String, AnalysisProvider<AnalyzerProvider<? extends Analyzer>>> getAnalyzers() {
        return Map.of("kuromoji", KuromojiAnalyzerProvider::new);
    }

    static JapaneseTokenizer.Mode mode(Settings settings) {
        String mode = settings.get("mode", JapaneseTokenizer.DEFAULT_MODE.toString()).toUpperCase(Locale.ROOT);
        try {
            return JapaneseTokenizer.Mode.valueOf(mode);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("kuromoji mode must be normal, search or extended, not [" + mode + "]", e);
        }
    }

    /**
     * The user dictionary of {@code user_dictionary} (a file under the config directory, as Amazon
     * OpenSearch Service's custom packages are) or {@code user_dictionary_rules} (inline), not both.
     * A surface given twice is an error, as analysis-kuromoji reports it, unless {@code lenient}.
     */
    static UserDictionary userDictionary(Environment env, Settings settings) {
        String path = settings.get("user_dictionary");
        List<String> rules = settings.getAsList("user_dictionary_rules", List.of());
        if (path != null && rules.isEmpty() == false) {
            throw new IllegalArgumentException("It is not allowed to use [user_dictionary] in conjunction with [user_dictionary_rules]");
        }
        List<String> lines = Analysis.parseWordList(env, settings, "user_dictionary", "user_dictionary_rules", line -> line);
        if (lines == null || lines.isEmpty()) {
            return null;
        }
        boolean lenient = settings.getAsBoolean("lenient", false);
        Set<String> surfaces = new HashSet<>();
        StringBuilder text = new StringBuilder();
        int number = 0;
        for (String line : lines) {
            number++;
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String surface = line.split(",", 2)[0].trim();
            if (surfaces.add(surface) == false) {
                if (lenient) {
                    continue;
                }
                throw new IllegalArgumentException("Found duplicate term [" + surface + "] in user dictionary at line [" + number + "]");
            }
            text.append(line).append('\n');
        }
        try {
            return UserDictionary.open(new StringReader(text.toString()));
        } catch (IOException e) {
            throw new IllegalArgumentException("failed to load the kuromoji user dictionary: " + e.getMessage(), e);
        }
    }

    static CharArraySet stopWords(Environment env, Settings settings) {
        return Analysis.parseWords(
            env,
            settings,
            "stopwords",
            JapaneseAnalyzer.getDefaultStopSet(),
            Map.of("_japanese_", JapaneseAnalyzer.getDefaultStopSet()),
            settings.getAsBoolean("ignore_case", false)
        );
    }

    static Set<String> stopTags(Environment env, Settings settings) {
        List<String> tags = Analysis.parseWordList(env, settings, "stoptags", tag -> tag);
        return tags == null ? JapaneseAnalyzer.getDefaultStopTags() : Set.copyOf(tags);
    }

    static final class KuromojiTokenizerFactory extends AbstractTokenizerFactory {
        private final UserDictionary userDictionary;
        private final JapaneseTokenizer.Mode mode;
        private final boolean discardPunctuation;
        private final boolean discardCompoundToken;
        private final int nBestCost;
        private final String nBestExamples;

        KuromojiTokenizerFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, settings, name);
            this.mode = mode(settings);
            this.userDictionary = userDictionary(env, settings);
            this.discardPunctuation = settings.getAsBoolean("discard_punctuation", true);
            this.discardCompoundToken = settings.getAsBoolean("discard_compound_token", false);
            this.nBestCost = settings.getAsInt("nbest_cost", -1);
            this.nBestExamples = settings.get("nbest_examples");
        }

        @Override
        public Tokenizer create() {
            JapaneseTokenizer tokenizer = new JapaneseTokenizer(userDictionary, discardPunctuation, discardCompoundToken, mode);
            int cost = nBestCost;
            if (nBestExamples != null) {
                cost = Math.max(cost, tokenizer.calcNBestCost(nBestExamples));
            }
            tokenizer.setNBestCost(cost);
            return tokenizer;
        }
    }

    /** A filter with no settings of its own. */
    static final class Simple extends AbstractTokenFilterFactory {
        private final java.util.function.Function<TokenStream, TokenStream> make;

        Simple(IndexSettings index, String name, Settings settings, java.util.function.Function<TokenStream, TokenStream> make) {
            super(index, name, settings);
            this.make = make;
        }

        @Override
        public TokenStream create(TokenStream stream) {
            return make.apply(stream);
        }
    }

    static final class PartOfSpeechFactory extends AbstractTokenFilterFactory {
        private final Set<String> stopTags;

        PartOfSpeechFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, name, settings);
            this.stopTags = stopTags(env, settings);
        }

        @Override
        public TokenStream create(TokenStream stream) {
            return new JapanesePartOfSpeechStopFilter(stream, stopTags);
        }
    }

    static final class ReadingFormFactory extends AbstractTokenFilterFactory {
        private final boolean useRomaji;

        ReadingFormFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, name, settings);
            this.useRomaji = settings.getAsBoolean("use_romaji", false);
        }

        @Override
        public TokenStream create(TokenStream stream) {
            return new JapaneseReadingFormFilter(stream, useRomaji);
        }
    }

    static final class StemmerFactory extends AbstractTokenFilterFactory {
        private final int minimumLength;

        StemmerFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, name, settings);
            this.minimumLength = settings.getAsInt("minimum_length", JapaneseKatakanaStemFilter.DEFAULT_MINIMUM_LENGTH);
        }

        @Override
        public TokenStream create(TokenStream stream) {
            return new JapaneseKatakanaStemFilter(stream, minimumLength);
        }
    }

    static final class StopFactory extends AbstractTokenFilterFactory {
        private final CharArraySet stopWords;
        private final boolean removeTrailing;

        StopFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, name, settings);
            this.stopWords = stopWords(env, settings);
            this.removeTrailing = settings.getAsBoolean("remove_trailing", true);
            if (removeTrailing == false) {
                throw new IllegalArgumentException("[remove_trailing] false is not supported by docindex's local ja_stop");
            }
        }

        @Override
        public TokenStream create(TokenStream stream) {
            return new StopFilter(stream, stopWords);
        }
    }

    static final class CompletionFactory extends AbstractTokenFilterFactory {
        private final JapaneseCompletionFilter.Mode mode;

        CompletionFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, name, settings);
            String value = settings.get("mode", JapaneseCompletionFilter.DEFAULT_MODE.toString()).toUpperCase(Locale.ROOT);
            this.mode = JapaneseCompletionFilter.Mode.valueOf(value);
        }

        @Override
        public TokenStream create(TokenStream stream) {
            return new JapaneseCompletionFilter(stream, mode);
        }
    }

    static final class IterationMarkCharFilterFactory extends AbstractCharFilterFactory implements NormalizingCharFilterFactory {
        private final boolean normalizeKanji;
        private final boolean normalizeKana;

        IterationMarkCharFilterFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, name);
            this.normalizeKanji = settings.getAsBoolean("normalize_kanji", JapaneseIterationMarkCharFilter.NORMALIZE_KANJI_DEFAULT);
            this.normalizeKana = settings.getAsBoolean("normalize_kana", JapaneseIterationMarkCharFilter.NORMALIZE_KANA_DEFAULT);
        }

        @Override
        public Reader create(Reader reader) {
            return new JapaneseIterationMarkCharFilter(reader, normalizeKanji, normalizeKana);
        }
    }

    static final class KuromojiAnalyzerProvider extends AbstractIndexAnalyzerProvider<JapaneseAnalyzer> {
        private final JapaneseAnalyzer analyzer;

        KuromojiAnalyzerProvider(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, name, settings);
            this.analyzer = new JapaneseAnalyzer(userDictionary(env, settings), mode(settings), stopWords(env, settings), stopTags(env, settings));
        }

        @Override
        public JapaneseAnalyzer get() {
            return analyzer;
        }
    }
}
