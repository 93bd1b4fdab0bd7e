// CPU implementation of jk_matmul / jk_linear: exact float32 accumulation for every dtype and precision.
#pragma once
#include "matmul/matmul_problem.h"

namespace jk::cpu {

// Computes the whole (batched) problem; the caller has checked shapes and guarded empty outputs.
void Matmul(const MatmulProblem& p);

}  // namespace jk::cpu
