/*
 * The local node's k-NN plugin is Maven Central's zip, which has no Faiss or NMSLIB native library: a
 * knn_vector field on either engine is accepted by the mapping, and the first document written to it
 * kills the node (UnsatisfiedLinkError is fatal). This plugin makes the node refuse such a field when
 * an index is created or its mapping changed, with a 400 naming the field, as a cluster refuses an
 * encoding it does not offer: docindex then falls back to its Lucene encoding (fp32), and a person
 * trying something by hand gets an answer instead of a dead node. Amazon OpenSearch Service has both
 * libraries; this is a dev-kit plugin only.
 */
package org.docindex.opensearch.lucenevectors;

import java.util.List;
import java.util.Map;

import org.opensearch.action.ActionRequest;
import org.opensearch.action.admin.indices.create.CreateIndexRequest;
import org.opensearch.action.admin.indices.mapping.put.PutMappingRequest;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.action.support.ActionFilterChain;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.plugins.ActionPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.tasks.Task;

public class LuceneVectorsOnlyPlugin extends Plugin implements ActionPlugin {

    @Override
    public List<ActionFilter> getActionFilters() {
        return List.of(new Filter());
    }

    /** The first knn_vector field of {@code mapping} that needs a native engine, as "path: why"; null when none. */
    @SuppressWarnings("unchecked")
    static String nativeField(Map<String, Object> mapping, String path) {
        if ("knn_vector".equals(mapping.get("type"))) {
            Object method = mapping.get("method");
            Object engine = method instanceof Map ? ((Map<String, Object>) method).get("engine") : null;
            if (mapping.containsKey("model_id")) {
                return path + ": a trained model (model_id) needs Faiss";
            }
            Object mode = mapping.get("mode");
            if (mode != null && "in_memory".equals(mode) == false) {
                return path + ": mode " + mode + " needs Faiss";
            }
            Object compression = mapping.get("compression_level");
            if (compression != null && "1x".equals(compression) == false) {
                return path + ": compression_level " + compression + " needs Faiss";
            }
            if ("lucene".equals(engine) == false) {
                return path + ": engine " + (engine == null ? "(none: the default, faiss)" : engine) + " needs a native library";
            }
            return null;
        }
        for (Map.Entry<String, Object> entry : mapping.entrySet()) {
            if (entry.getValue() instanceof Map) {
                String child = path.isEmpty() ? entry.getKey() : path + "." + entry.getKey();
                String found = nativeField((Map<String, Object>) entry.getValue(), child);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    static final class Filter implements ActionFilter {
        @Override
        public int order() {
            return Integer.MIN_VALUE;
        }

        @Override
        public <Request extends ActionRequest, Response extends ActionResponse> void apply(
            Task task,
            String action,
            Request request,
            ActionListener<Response> listener,
            ActionFilterChain<Request, Response> chain
        ) {
            String source = null;
            if (request instanceof CreateIndexRequest) {
                source = ((CreateIndexRequest) request).mappings();
            } else if (request instanceof PutMappingRequest) {
                source = ((PutMappingRequest) request).source();
            }
            if (source != null && source.isEmpty() == false) {
                String found = nativeField(XContentHelper.convertToMap(JsonXContent.jsonXContent, source, false), "");
                if (found != null) {
                    listener.onFailure(
                        new IllegalArgumentException(
                            "this local node's k-NN plugin has no Faiss or NMSLIB library, only the Lucene engine: knn_vector "
                                + found
                                + " (use method.engine lucene: VECTOR_ENCODING fp32 or int7)"
                        )
                    );
                    return;
                }
            }
            chain.proceed(task, action, request, listener);
        }
    }
}
