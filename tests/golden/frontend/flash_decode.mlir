// Loom TileProgram of kernel flash_decode (loom/kernels/flash_decode.py)
"builtin.module"() ({
  "func.func"() <{function_type = (memref<2x1x64xbf16>, memref<2x1024x64xbf16>, memref<2x1024x64xbf16>, memref<2x1x64xbf16>) -> (), sym_name = "flash_decode"}> ({
  ^bb0(%q: memref<2x1x64xbf16>, %k: memref<2x1024x64xbf16>, %v: memref<2x1024x64xbf16>, %out: memref<2x1x64xbf16>):
    %tile_b = "loom.sym"() {symbol_ref = @tile_b, kind = "tile", lower_bound = 1 : index, upper_bound = 1 : index, alignment = 1 : index} : () -> index
    %tile_s = "loom.sym"() {symbol_ref = @tile_s, kind = "tile", lower_bound = 32 : index, upper_bound = 1024 : index, alignment = 32 : index} : () -> index
    %tile_n = "loom.sym"() {symbol_ref = @tile_n, kind = "tile", lower_bound = 32 : index, upper_bound = 1024 : index, alignment = 32 : index} : () -> index
    "loom.grid"() ({
    ^bb0(%tile_b_id: index, %tile_s_id: index):
      %m_i = "loom.full"() {value = "-inf", shape = ["tile_b", "1"]} : () -> tensor<?x1xf32>
      %l_i = "loom.full"() {value = 0.0 : f64, shape = ["tile_b", "1"]} : () -> tensor<?x1xf32>
      %acc = "loom.full"() {value = 0.0 : f64, shape = ["tile_b", "1", "64"]} : () -> tensor<?x1x64xf32>
      %q_tile = "loom.load"(%q) {offsets = ["tile_b*tile_b_id", "0", "0"], sizes = ["tile_b", "1", "64"]} : (memref<2x1x64xbf16>) -> tensor<?x1x64xbf16>
      %q_tile_scaled = "loom.elementwise"(%q_tile) {fn = "mul", scalars = [0.125 : f64], scalar_positions = [1]} : (tensor<?x1x64xbf16>) -> tensor<?x1x64xbf16>
      %m_i_final, %l_i_final, %acc_final = "loom.for"(%m_i, %l_i, %acc) ({
      ^bb0(%tile_n_id: index, %m_i_iter: tensor<?x1xf32>, %l_i_iter: tensor<?x1xf32>, %acc_iter: tensor<?x1x64xf32>):
        %k_tile = "loom.load"(%k) {offsets = ["tile_b*tile_b_id", "tile_n*tile_n_id + tile_s*tile_s_id", "0"], sizes = ["tile_b", "tile_n", "64"]} : (memref<2x1024x64xbf16>) -> tensor<?x?x64xbf16>
        %qk = "loom.matmul"(%q_tile_scaled, %k_tile) {rhs_transposed = true} : (tensor<?x1x64xbf16>, tensor<?x?x64xbf16>) -> tensor<?x1x?xbf16>
        %amax = "loom.reduce"(%qk) {fn = "max", axis = 2 : i64} : (tensor<?x1x?xbf16>) -> tensor<?x1xbf16>
        %m_ij = "loom.elementwise"(%m_i_iter, %amax) {fn = "maximum"} : (tensor<?x1xf32>, tensor<?x1xbf16>) -> tensor<?x1xf32>
        %subscript = "loom.expand_dims"(%m_ij) {axis = 2 : i64} : (tensor<?x1xf32>) -> tensor<?x1x1xf32>
        %sub = "loom.elementwise"(%qk, %subscript) {fn = "sub"} : (tensor<?x1x?xbf16>, tensor<?x1x1xf32>) -> tensor<?x1x?xf32>
        %exp = "loom.elementwise"(%sub) {fn = "exp"} : (tensor<?x1x?xf32>) -> tensor<?x1x?xf32>
        %sub_1 = "loom.elementwise"(%m_i_iter, %m_ij) {fn = "sub"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
        %alpha = "loom.elementwise"(%sub_1) {fn = "exp"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
        %mul_1 = "loom.elementwise"(%l_i_iter, %alpha) {fn = "mul"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
        %sum_1 = "loom.reduce"(%exp) {fn = "sum", axis = 2 : i64} : (tensor<?x1x?xf32>) -> tensor<?x1xf32>
        %l_i_1 = "loom.elementwise"(%mul_1, %sum_1) {fn = "add"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
        %subscript_1 = "loom.expand_dims"(%alpha) {axis = 2 : i64} : (tensor<?x1xf32>) -> tensor<?x1x1xf32>
        %acc_1 = "loom.elementwise"(%acc_iter, %subscript_1) {fn = "mul"} : (tensor<?x1x64xf32>, tensor<?x1x1xf32>) -> tensor<?x1x64xf32>
        %exp_bf16 = "loom.convert"(%exp) : (tensor<?x1x?xf32>) -> tensor<?x1x?xbf16>
        %v_tile = "loom.load"(%v) {offsets = ["tile_b*tile_b_id", "tile_n*tile_n_id + tile_s*tile_s_id", "0"], sizes = ["tile_b", "tile_n", "64"]} : (memref<2x1024x64xbf16>) -> tensor<?x?x64xbf16>
        %acc_1_1 = "loom.matmul"(%exp_bf16, %v_tile, %acc_1) {rhs_transposed = false} : (tensor<?x1x?xbf16>, tensor<?x?x64xbf16>, tensor<?x1x64xf32>) -> tensor<?x1x64xf32>
        "loom.yield"(%m_ij, %l_i_1, %acc_1_1) : (tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1x64xf32>) -> ()
      }) {tile = @tile_n, begin = "tile_s*tile_s_id", end = "tile_s*tile_s_id + tile_s", trip_count = "ceildiv(tile_s, tile_n)"} : (tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1x64xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1x64xf32>)
      %m_all = "loom.gather"(%m_i_final) {across = @tile_s} : (tensor<?x1xf32>) -> tensor<?x?x1xf32>
      %l_all = "loom.gather"(%l_i_final) {across = @tile_s} : (tensor<?x1xf32>) -> tensor<?x?x1xf32>
      %acc_all = "loom.gather"(%acc_final) {across = @tile_s} : (tensor<?x1x64xf32>) -> tensor<?x?x1x64xf32>
      "loom.if"() ({
        %m_max = "loom.reduce"(%m_all) {fn = "max", axis = 0 : i64} : (tensor<?x?x1xf32>) -> tensor<?x1xf32>
        %subscript_2 = "loom.expand_dims"(%m_max) {axis = 0 : i64} : (tensor<?x1xf32>) -> tensor<1x?x1xf32>
        %sub_2 = "loom.elementwise"(%m_all, %subscript_2) {fn = "sub"} : (tensor<?x?x1xf32>, tensor<1x?x1xf32>) -> tensor<?x?x1xf32>
        %weight = "loom.elementwise"(%sub_2) {fn = "exp"} : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
        %mul = "loom.elementwise"(%l_all, %weight) {fn = "mul"} : (tensor<?x?x1xf32>, tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
        %l_sum = "loom.reduce"(%mul) {fn = "sum", axis = 0 : i64} : (tensor<?x?x1xf32>) -> tensor<?x1xf32>
        %subscript_1_1 = "loom.expand_dims"(%weight) {axis = 3 : i64} : (tensor<?x?x1xf32>) -> tensor<?x?x1x1xf32>
        %mul_1_1 = "loom.elementwise"(%acc_all, %subscript_1_1) {fn = "mul"} : (tensor<?x?x1x64xf32>, tensor<?x?x1x1xf32>) -> tensor<?x?x1x64xf32>
        %o_sum = "loom.reduce"(%mul_1_1) {fn = "sum", axis = 0 : i64} : (tensor<?x?x1x64xf32>) -> tensor<?x1x64xf32>
        %subscript_2_1 = "loom.expand_dims"(%l_sum) {axis = 2 : i64} : (tensor<?x1xf32>) -> tensor<?x1x1xf32>
        %div = "loom.elementwise"(%o_sum, %subscript_2_1) {fn = "div"} : (tensor<?x1x64xf32>, tensor<?x1x1xf32>) -> tensor<?x1x64xf32>
        %div_bf16 = "loom.convert"(%div) : (tensor<?x1x64xf32>) -> tensor<?x1x64xbf16>
        "loom.store"(%div_bf16, %out) {offsets = ["tile_b*tile_b_id", "0", "0"], sizes = ["tile_b", "1", "64"]} : (tensor<?x1x64xbf16>, memref<2x1x64xbf16>) -> ()
        "loom.yield"() : () -> ()
      }) {cond = "tile_s_id == 0"} : () -> ()
      "loom.yield"() : () -> ()
    }) {tiles = [@tile_b, @tile_s], extents = [2 : index, 1024 : index], num_tiles = ["ceildiv(2, tile_b)", "ceildiv(1024, tile_s)"]} : () -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
