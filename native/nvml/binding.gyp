{
  "targets": [
    {
      "target_name": "gpushare_nvml",
      "sources": [
        "src/addon.cc",
        "src/checkpoint.cc",
        "src/describe.cc",
        "src/gpm.cc",
        "src/library.cc",
        "src/packed.cc",
        "src/peer.cc",
        "src/processes.cc",
        "src/sample.cc",
        "src/signal.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": [
        "NAPI_VERSION=9",
        "NAPI_CPP_EXCEPTIONS",
        "NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED",
        "NODE_ADDON_API_DISABLE_DEPRECATED"
      ],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-fvisibility=hidden", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "libraries": ["-ldl"]
    }
  ]
}
