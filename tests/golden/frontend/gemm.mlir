// Loom TileProgram of kernel gemm (loom/kernels/gemm.py)
"builtin.module"() ({
  "func.func"() <{function_type = (memref<256x128xbf16>, memref<128x512xbf16>, memref<256x512xbf16>) -> (), sym_name = "gemm"}> ({
  ^bb0(%a: memref<256x128xbf16>, %b: memref<128x512xbf16>, %out: memref<256x512xbf16>):
    %tile_m = "loom.sym"() {symbol_ref = @tile_m, kind = "tile", lower_bound = 32 : index, upper_bound = 256 : index, alignment = 32 : index} : () -> index
    %tile_n = "loom.sym"() {symbol_ref = @tile_n, kind = "tile", lower_bound = 32 : index, upper_bound = 512 : index, alignment = 32 : index} : () -> index
    %tile_k = "loom.sym"() {symbol_ref = @tile_k, kind = "tile", lower_bound = 32 : index, upper_bound = 128 : index, alignment = 32 : index} : () -> index
    "loom.grid"() ({
    ^bb0(%tile_m_id: index, %tile_n_id: index):
      %acc = "loom.full"() {value = 0.0 : f64, shape = ["tile_m", "tile_n"]} : () -> tensor<?x?xf32>
      %acc_final = "loom.for"(%acc) ({
      ^bb0(%tile_k_id: index, %acc_iter: tensor<?x?xf32>):
        %a_tile = "loom.load"(%a) {offsets = ["tile_m*tile_m_id", "tile_k*tile_k_id"], sizes = ["tile_m", "tile_k"]} : (memref<256x128xbf16>) -> tensor<?x?xbf16>
        %b_tile = "loom.load"(%b) {offsets = ["tile_k*tile_k_id", "tile_n*tile_n_id"], sizes = ["tile_k", "tile_n"]} : (memref<128x512xbf16>) -> tensor<?x?xbf16>
        %acc_1 = "loom.matmul"(%a_tile, %b_tile, %acc_iter) {rhs_transposed = false} : (tensor<?x?xbf16>, tensor<?x?xbf16>, tensor<?x?xf32>) -> tensor<?x?xf32>
        "loom.yield"(%acc_1) : (tensor<?x?xf32>) -> ()
      }) {tile = @tile_k, begin = "0", end = "128", trip_count = "ceildiv(128, tile_k)"} : (tensor<?x?xf32>) -> (tensor<?x?xf32>)
      %acc_final_bf16 = "loom.convert"(%acc_final) : (tensor<?x?xf32>) -> tensor<?x?xbf16>
      "loom.store"(%acc_final_bf16, %out) {offsets = ["tile_m*tile_m_id", "tile_n*tile_n_id"], sizes = ["tile_m", "tile_n"]} : (tensor<?x?xbf16>, memref<256x512xbf16>) -> ()
      "loom.yield"() : () -> ()
    }) {tiles = [@tile_m, @tile_n], extents = [256 : index, 512 : index], num_tiles = ["ceildiv(256, tile_m)", "ceildiv(512, tile_n)"]} : () -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
