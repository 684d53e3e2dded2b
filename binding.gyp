# The libibumad addon (native/). Built offline by scripts/build-native.mjs (node-gyp --nodedir=/usr).
# Newer libibumad (rdma-core >= 52) splits SMI and GSI devices; the split is used when the installed
# header declares it, detected at configure time so older libraries still build.
{
  'variables': {
    'ibsm_have_open_smi%': '<!(grep -qs umad_open_smi_port /usr/include/infiniband/umad.h && echo 1 || echo 0)',
    'ibsm_have_smi_gsi%': '<!(grep -qs umad_get_smi_gsi_pair_by_ca_name /usr/include/infiniband/umad.h && echo 1 || echo 0)',
  },
  'targets': [
    {
      'target_name': 'ibsm_umad',
      'sources': ['native/ibsm_umad.cc', 'native/issm.c', 'native/umad2sim-exit.c'],
      'dependencies': ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"],
      'defines': [
        'NAPI_VERSION=8',
        'IBSM_HAVE_OPEN_SMI_PORT=<(ibsm_have_open_smi)',
        'IBSM_HAVE_SMI_GSI_PAIRS=<(ibsm_have_smi_gsi)',
      ],
      'cflags': ['-Wall', '-Wextra', '-Wno-unused-parameter'],
      'cflags_cc': ['-std=c++17', '-Wall', '-Wextra', '-Wno-unused-parameter'],
      'libraries': ['-libumad', '-lpthread'],
    },
  ],
}
