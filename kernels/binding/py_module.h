// The Python side of the extension, shared by both bindings (ops.cc,
// ops_stable.cc): a minimal limited-API module.  Importing sageattention._C
// loads the library, whose static initialisers (the TORCH_LIBRARY blocks of
// the binding that includes this, last) register the ops.  Torch-free.
//
// The registration blocks themselves stay in each binding: they use that
// binding's macros (TORCH_LIBRARY or STABLE_TORCH_LIBRARY, TORCH_BOX), and
// those record __FILE__ and __LINE__ in the library, so moving them here would
// change every wheel's bytes.
#pragma once

#include <Python.h>

static PyModuleDef sa_module = {PyModuleDef_HEAD_INIT,
                                "_C",
                                "SageAttention CUDA kernels; the ops live in torch.ops.sageattention",
                                -1,
                                nullptr,
                                nullptr,
                                nullptr,
                                nullptr,
                                nullptr};

PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&sa_module); }
