# Emscripten build of the Embind module (included by wasm/CMakeLists.txt when EMSCRIPTEN).
# One configuration per variant (presets wasm-threads / wasm-single); both compile the
# same sources. Output: tiankong-core[-threads].mjs + .wasm (+ .worker.js for threads).
# The loader is .mjs so that Node treats it as ES module even inside a folder whose
# package.json says "commonjs" (which the CommonJS pthread worker needs).

file(READ ${CMAKE_SOURCE_DIR}/package.json TK_PACKAGE_JSON)
string(JSON TK_VERSION GET "${TK_PACKAGE_JSON}" version)

set(TK_WASM_COMPILE_FLAGS -O3 -msimd128)
set(TK_WASM_LINK_FLAGS
  -O3 -msimd128 -lembind
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sENVIRONMENT=web,worker,node
  -sFILESYSTEM=0
  # No eval/new Function in the Embind glue, so pages can use a strict CSP without 'unsafe-eval'.
  -sDYNAMIC_EXECUTION=0
  # A library must not take over the host process: no global unhandledRejection /
  # uncaughtException / exit handlers installed in Node.
  -sNODEJS_CATCH_REJECTION=0 -sNODEJS_CATCH_EXIT=0
  --extern-pre-js ${CMAKE_CURRENT_SOURCE_DIR}/bindings/extern-pre.js)

if(TK_WASM_THREADS)
  set(TK_WASM_NAME tiankong-core-threads)
  set(TK_WASM_EXPORT_NAME createTiankongCoreThreads)
  list(APPEND TK_WASM_COMPILE_FLAGS -pthread)
  # A small pool created at startup (Module.PThread is exported by Emscripten for
  # pthread builds: the loader calls PThread.terminateAllThreads() on dispose).
  list(APPEND TK_WASM_LINK_FLAGS -pthread -sPTHREAD_POOL_SIZE=2 -sPTHREAD_POOL_SIZE_STRICT=2)
  # Fixed heap: with pthreads, ALLOW_MEMORY_GROWTH makes every heap access of the JS glue
  # re-check the buffer, which measured 1.6x slower encode() calls. 64 MB holds the vocab
  # (~3 MB), decode scratch and a cache bounded at half the heap (the bindings check it).
  list(APPEND TK_WASM_LINK_FLAGS -sINITIAL_MEMORY=64MB)
else()
  set(TK_WASM_NAME tiankong-core)
  set(TK_WASM_EXPORT_NAME createTiankongCore)
  list(APPEND TK_WASM_LINK_FLAGS -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=16MB)
endif()

# -pthread must be on every object (core included), or the linker rejects the mix.
target_compile_options(tiankong_core PRIVATE ${TK_WASM_COMPILE_FLAGS})

add_executable(${TK_WASM_NAME} ${CMAKE_CURRENT_SOURCE_DIR}/bindings/embind.cc)
target_compile_options(${TK_WASM_NAME} PRIVATE ${TK_WASM_COMPILE_FLAGS} -Wall -Wextra)
target_compile_definitions(${TK_WASM_NAME} PRIVATE TK_VERSION="${TK_VERSION}")
target_link_libraries(${TK_WASM_NAME} PRIVATE tiankong_core)
target_link_options(${TK_WASM_NAME} PRIVATE ${TK_WASM_LINK_FLAGS}
                    -sEXPORT_NAME=${TK_WASM_EXPORT_NAME})
set_target_properties(${TK_WASM_NAME} PROPERTIES SUFFIX ".mjs"
                      LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/bindings/extern-pre.js)
