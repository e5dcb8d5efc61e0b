#include "base/base_impl.h"

#define CB_STR2(x) #x
#define CB_STR(x) CB_STR2(x)

#if defined(__clang__)
#define CB_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define CB_COMPILER "gcc " CB_STR(__GNUC__) "." CB_STR(__GNUC_MINOR__) "." CB_STR(__GNUC_PATCHLEVEL__)
#else
#define CB_COMPILER "unknown compiler"
#endif

cb_build_info cb_query_build_info(void)
{
    cb_build_info info = {
        .version = CB_VERSION_STRING,
        .isa = CB_ISA_NAME,
        .simd_width = CB_SIMD_WIDTH,
        .fma = false, /* multiply-adds are never fused: one result everywhere (simd/vf.h) */
        .compiler = CB_COMPILER,
#ifdef NDEBUG
        .debug = false,
#else
        .debug = true,
#endif
    };
    return info;
}

cb_xform cb_xform_identity(void)
{
    cb_xform x = {
        .rotation = {0.0f, 0.0f, 0.0f, 1.0f},
        .translation = {0.0f, 0.0f, 0.0f},
        .scale = {1.0f, 1.0f, 1.0f},
    };
    return x;
}
