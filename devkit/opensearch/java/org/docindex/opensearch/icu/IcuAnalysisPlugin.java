/*
 * docindex's local stand-in for OpenSearch's analysis-icu plugin, whose 2.19 jar Maven Central does
 * not serve (org.opensearch.plugin:analysis-icu-client stops at 2.16.0 and starts again at 3.8.0).
 *
 * It registers the analysis names and settings of analysis-icu as OpenSearch documents them
 * (icu_normalizer as a char filter and a token filter, icu_folding, icu_tokenizer, icu_transform),
 * each on the Lucene class analysis-icu uses (lucene-analysis-icu with the icu4j it is built
 * against). The collation field type and icu_collation filter are left out: docindex does not use
 * them. Written for docindex from the documentation; no OpenSearch source is copied.
 */
package org.docindex.opensearch.icu;

import java.io.Reader;
import java.util.Locale;
import java.util.Map;

import com.ibm.icu.text.FilteredNormalizer2;
import com.ibm.icu.text.Normalizer2;
import com.ibm.icu.text.Transliterator;
import com.ibm.icu.text.UnicodeSet;

import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.icu.ICUFoldingFilter;
import org.apache.lucene.analysis.icu.ICUNormalizer2CharFilter;
import org.apache.lucene.analysis.icu.ICUNormalizer2Filter;
import org.apache.lucene.analysis.icu.ICUTransformFilter;
import org.apache.lucene.analysis.icu.segmentation.DefaultICUTokenizerConfig;
import org.apache.lucene.analysis.icu.segmentation.ICUTokenizer;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.index.IndexSettings;
import org.opensearch.index.analysis.AbstractCharFilterFactory;
import org.opensearch.index.analysis.AbstractTokenFilterFactory;
import org.opensearch.index.analysis.AbstractTokenizerFactory;
import org.opensearch.index.analysis.CharFilterFactory;
import org.opensearch.index.analysis.NormalizingCharFilterFactory;
import org.opensearch.index.analysis.NormalizingTokenFilterFactory;
import org.opensearch.index.analysis.TokenFilterFactory;
import org.opensearch.index.analysis.TokenizerFactory;
import org.opensearch.indices.analysis.AnalysisModule.AnalysisProvider;
import org.opensearch.plugins.AnalysisPlugin;
import org.opensearch.plugins.Plugin;

public class IcuAnalysisPlugin extends Plugin implements AnalysisPlugin {

    @Override
    public Map<String, AnalysisProvider<CharFilterFactory>> getCharFilters() {
        return Map.of("icu_normalizer", NormalizerCharFilterFactory::new);
    }

    @Override
    public Map<String, AnalysisProvider<TokenFilterFactory>> getTokenFilters() {
        return Map.of(
            "icu_normalizer",
            NormalizerFilterFactory::new,
            "icu_folding",
            FoldingFilterFactory::new,
            "icu_transform",
            TransformFilterFactory::new
        );
    }

    @Override
    public Map<String, AnalysisProvider<TokenizerFactory>> getTokenizers() {
        return Map.of("icu_tokenizer", IcuTokenizerFactory::new);
    }

    /** {@code name} (nfc, nfkc, nfkc_cf: the default) and {@code mode} (compose, decompose), filtered by {@code unicode_set_filter}. */
    static Normalizer2 normalizer(Settings settings) {
        String name = settings.get("name", "nfkc_cf");
        String mode = settings.get("mode", "compose");
        Normalizer2.Mode chosen = switch (mode) {
            case "compose" -> Normalizer2.Mode.COMPOSE;
            case "decompose" -> Normalizer2.Mode.DECOMPOSE;
            default -> throw new IllegalArgumentException("icu_normalizer mode must be compose or decompose, not [" + mode + "]");
        };
        // decompose is the composed instance's decomposition: nfc -> nfd, nfkc -> nfkd, nfkc_cf as is
        return filtered(Normalizer2.getInstance(null, name, chosen), settings);
    }

    static Normalizer2 filtered(Normalizer2 normalizer, Settings settings) {
        String filter = settings.get("unicode_set_filter");
        if (filter == null) {
            return normalizer;
        }
        UnicodeSet set = new UnicodeSet(filter);
        set.freeze();
        return new FilteredNormalizer2(normalizer, set);
    }

    static final class NormalizerCharFilterFactory extends AbstractCharFilterFactory implements NormalizingCharFilterFactory {
        private final Normalizer2 normalizer;

        NormalizerCharFilterFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, name);
            this.normalizer = normalizer(settings);
        }

        @Override
        public Reader create(Reader reader) {
            return new ICUNormalizer2CharFilter(reader, normalizer);
        }
    }

    static final class NormalizerFilterFactory extends AbstractTokenFilterFactory implements NormalizingTokenFilterFactory {
        private final Normalizer2 normalizer;

        NormalizerFilterFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, name, settings);
            this.normalizer = normalizer(settings);
        }

        @Override
        public TokenStream create(TokenStream stream) {
            return new ICUNormalizer2Filter(stream, normalizer);
        }
    }

    static final class FoldingFilterFactory extends AbstractTokenFilterFactory implements NormalizingTokenFilterFactory {
        private final Normalizer2 normalizer;

        FoldingFilterFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, name, settings);
            this.normalizer = filtered(ICUFoldingFilter.NORMALIZER, settings);
        }

        @Override
        public TokenStream create(TokenStream stream) {
            return new ICUFoldingFilter(stream, normalizer);
        }
    }

    static final class TransformFilterFactory extends AbstractTokenFilterFactory implements NormalizingTokenFilterFactory {
        private final Transliterator transliterator;

        TransformFilterFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, name, settings);
            String id = settings.get("id", "Null");
            String dir = settings.get("dir", "forward").toLowerCase(Locale.ROOT);
            int direction = switch (dir) {
                case "forward" -> Transliterator.FORWARD;
                case "reverse" -> Transliterator.REVERSE;
                default -> throw new IllegalArgumentException("icu_transform dir must be forward or reverse, not [" + dir + "]");
            };
            this.transliterator = Transliterator.getInstance(id, direction);
        }

        @Override
        public TokenStream create(TokenStream stream) {
            return new ICUTransformFilter(stream, transliterator);
        }
    }

    static final class IcuTokenizerFactory extends AbstractTokenizerFactory {
        IcuTokenizerFactory(IndexSettings index, Environment env, String name, Settings settings) {
            super(index, settings, name);
            if (settings.get("rule_files") != null) {
                throw new IllegalArgumentException("[rule_files] is not supported by docindex's local icu_tokenizer");
            }
        }

        @Override
        public Tokenizer create() {
            return new ICUTokenizer(new DefaultICUTokenizerConfig(true, true));
        }
    }
}
