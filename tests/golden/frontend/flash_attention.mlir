// Loom TileProgram of kernel flash_attention (loom/kernels/flash_attention.py)
"builtin.module"() ({
  "func.func"() <{function_type = (memref<2x256x64xbf16>, memref<2x256x64xbf16>, memref<2x256x64xbf16>, memref<2x256x64xbf16>) -> (), sym_name = "flash_attention"}> ({
  ^bb0(%q: memref<2x256x64xbf16>, %k: memref<2x256x64xbf16>, %v: memref<2x256x64xbf16>, %out: memref<2x256x64xbf16>):
    %tile_b = "loom.sym"() {symbol_ref = @tile_b, kind = "tile", lower_bound = 1 : index, upper_bound = 2 : index, alignment = 1 : index} : () -> index
    %tile_m = "loom.sym"() {symbol_ref = @tile_m, kind = "tile", lower_bound = 32 : index, upper_bound = 256 : index, alignment = 32 : index} : () -> index
    %tile_n = "loom.sym"() {symbol_ref = @tile_n, kind = "tile", lower_bound = 32 : index, upper_bound = 256 : index, alignment = 32 : index} : () -> index
    "loom.grid"() ({
    ^bb0(%tile_b_id: index, %tile_m_id: index):
      %m_i = "loom.full"() {value = "-inf", shape = ["tile_b", "tile_m"]} : () -> tensor<?x?xf32>
      %l_i = "loom.full"() {value = 0.0 : f64, shape = ["tile_b", "tile_m"]} : () -> tensor<?x?xf32>
      %acc = "loom.full"() {value = 0.0 : f64, shape = ["tile_b", "tile_m", "64"]} : () -> tensor<?x?x64xf32>
      %q_tile = "loom.load"(%q) {offsets = ["tile_b*tile_b_id", "tile_m*tile_m_id", "0"], sizes = ["tile_b", "tile_m", "64"]} : (memref<2x256x64xbf16>) -> tensor<?x?x64xbf16>
      %q_tile_scaled = "loom.elementwise"(%q_tile) {fn = "mul", scalars = [0.125 : f64], scalar_positions = [1]} : (tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16>
      %m_i_final, %l_i_final, %acc_final = "loom.for"(%m_i, %l_i, %acc) ({
      ^bb0(%tile_n_id: index, %m_i_iter: tensor<?x?xf32>, %l_i_iter: tensor<?x?xf32>, %acc_iter: tensor<?x?x64xf32>):
        %k_tile = "loom.load"(%k) {offsets = ["tile_b*tile_b_id", "tile_n*tile_n_id", "0"], sizes = ["tile_b", "tile_n", "64"]} : (memref<2x256x64xbf16>) -> tensor<?x?x64xbf16>
        %qk = "loom.matmul"(%q_tile_scaled, %k_tile) {rhs_transposed = true} : (tensor<?x?x64xbf16>, tensor<?x?x64xbf16>) -> tensor<?x?x?xbf16>
        %amax = "loom.reduce"(%qk) {fn = "max", axis = 2 : i64} : (tensor<?x?x?xbf16>) -> tensor<?x?xbf16>
        %m_ij = "loom.elementwise"(%m_i_iter, %amax) {fn = "maximum"} : (tensor<?x?xf32>, tensor<?x?xbf16>) -> tensor<?x?xf32>
        %subscript = "loom.expand_dims"(%m_ij) {axis = 2 : i64} : (tensor<?x?xf32>) -> tensor<?x?x1xf32>
        %sub = "loom.elementwise"(%qk, %subscript) {fn = "sub"} : (tensor<?x?x?xbf16>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
        %exp = "loom.elementwise"(%sub) {fn = "exp"} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
        %sub_1 = "loom.elementwise"(%m_i_iter, %m_ij) {fn = "sub"} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
        %alpha = "loom.elementwise"(%sub_1) {fn = "exp"} : (tensor<?x?xf32>) -> tensor<?x?xf32>
        %mul_1 = "loom.elementwise"(%l_i_iter, %alpha) {fn = "mul"} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
        %sum_1 = "loom.reduce"(%exp) {fn = "sum", axis = 2 : i64} : (tensor<?x?x?xf32>) -> tensor<?x?xf32>
        %l_i_1 = "loom.elementwise"(%mul_1, %sum_1) {fn = "add"} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
        %subscript_1 = "loom.expand_dims"(%alpha) {axis = 2 : i64} : (tensor<?x?xf32>) -> tensor<?x?x1xf32>
        %acc_1 = "loom.elementwise"(%acc_iter, %subscript_1) {fn = "mul"} : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
        %exp_bf16 = "loom.convert"(%exp) : (tensor<?x?x?xf32>) -> tensor<?x?x?xbf16>
        %v_tile = "loom.load"(%v) {offsets = ["tile_b*tile_b_id", "tile_n*tile_n_id", "0"], sizes = ["tile_b", "tile_n", "64"]} : (memref<2x256x64xbf16>) -> tensor<?x?x64xbf16>
        %acc_1_1 = "loom.matmul"(%exp_bf16, %v_tile, %acc_1) {rhs_transposed = false} : (tensor<?x?x?xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
        "loom.yield"(%m_ij, %l_i_1, %acc_1_1) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x64xf32>) -> ()
      }) {tile = @tile_n, begin = "0", end = "256", trip_count = "ceildiv(256, tile_n)"} : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x64xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x64xf32>)
      %subscript_2 = "loom.expand_dims"(%l_i_final) {axis = 2 : i64} : (tensor<?x?xf32>) -> tensor<?x?x1xf32>
      %div = "loom.elementwise"(%acc_final, %subscript_2) {fn = "div"} : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
      %div_bf16 = "loom.convert"(%div) : (tensor<?x?x64xf32>) -> tensor<?x?x64xbf16>
      "loom.store"(%div_bf16, %out) {offsets = ["tile_b*tile_b_id", "tile_m*tile_m_id", "0"], sizes = ["tile_b", "tile_m", "64"]} : (tensor<?x?x64xbf16>, memref<2x256x64xbf16>) -> ()
      "loom.yield"() : () -> ()
    }) {tiles = [@tile_b, @tile_m], extents = [2 : index, 256 : index], num_tiles = ["ceildiv(2, tile_b)", "ceildiv(256, tile_m)"]} : () -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
